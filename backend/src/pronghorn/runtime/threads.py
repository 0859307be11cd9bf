"""Thread operations that must not interleave with runs (the threads router calls these)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from pronghorn.runtime.errors import Conflict
from pronghorn.runtime.manager import RunManager

T = TypeVar("T")


class ThreadBusy(Conflict):
    """The thread has a run in flight: its state cannot be changed now."""

    def __init__(self, thread_id: str, run_id: str | None = None) -> None:
        by = f" (run {run_id})" if run_id else ""
        super().__init__(f"Thread {thread_id} is busy: a run is in flight{by}")


async def while_idle(
    runs: RunManager, thread: Mapping[str, Any], change: Callable[[], Awaitable[T]]
) -> T:
    """Run ``change`` (e.g. a state update) on an idle thread, with no run starting on it
    until it is done; `ThreadBusy` if a run is in flight. ``thread`` is its row: a row that
    says busy is refused too (a run of a process that died is settled by recovery)."""
    thread_id = str(thread["thread_id"])
    if thread["status"] == "busy":
        raise ThreadBusy(thread_id)
    async with runs.thread_turn(thread_id, busy=lambda run_id: ThreadBusy(thread_id, run_id)):
        return await change()
