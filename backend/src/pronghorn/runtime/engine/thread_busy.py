"""The error of a state change asked for while the thread is busy (a run in flight, or
another state update under way); a `Conflict` (409)."""

from __future__ import annotations

from pronghorn.runtime.errors import Conflict


class ThreadBusy(Conflict):
    """The thread has a run in flight: its state cannot be changed now."""

    def __init__(
        self, thread_id: str, run_id: str | None = None, *, doing: str = "a run is in flight"
    ) -> None:
        by = f" (run {run_id})" if run_id else ""
        super().__init__(f"Thread {thread_id} is busy: {doing}{by}")
