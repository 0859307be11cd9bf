"""What a repository unit refuses, as typed values: the unit raises one of these (its
transaction rolls back) and the runtime maps it to its own error in one place
(runtime/errors.py, `domain_error`). Persistence never raises the runtime's errors.

A lookup that finds nothing returns None, and the deletes that sweeps and user removal
share (a thread, a cron) say whether there was anything to delete: neither is a refusal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pronghorn.persistence.records.runs import RunRecord

QueueCap = Literal["max_queued", "max_queued_per_user"]


class RecordError(Exception):
    """Base of every refusal a repository unit raises on purpose."""


class AssistantMissing(RecordError):
    """No assistant by this id or graph id the caller may use."""

    def __init__(self, ref: str) -> None:
        super().__init__(ref)
        self.ref = ref


class ThreadMissing(RecordError):
    """No thread by this id the caller may use or change (another user's counts as none)."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(thread_id)
        self.thread_id = thread_id


class ThreadExists(RecordError):
    """A thread by this id exists already (a create that may not reuse it)."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(thread_id)
        self.thread_id = thread_id


class AssistantExists(RecordError):
    """An assistant by this id exists already (a create that may not reuse it)."""

    def __init__(self, assistant_id: str) -> None:
        super().__init__(assistant_id)
        self.assistant_id = assistant_id


class CronMissing(RecordError):
    """No cron by this id (to change)."""

    def __init__(self, cron_id: str) -> None:
        super().__init__(cron_id)
        self.cron_id = cron_id


class FeedbackMissing(RecordError):
    """No feedback of this user on this run (to remove, or to read back once set)."""

    def __init__(self, run_id: str, user_id: str) -> None:
        super().__init__(run_id, user_id)
        self.run_id = run_id
        self.user_id = user_id


class ThreadBusy(RecordError):
    """The thread has unfinished runs (`inflight`, oldest first) and the new run may not
    wait for them (multitask strategy `reject`)."""

    def __init__(self, thread_id: str, inflight: Sequence[RunRecord]) -> None:
        super().__init__(thread_id)
        self.thread_id = thread_id
        self.inflight = tuple(inflight)

    @property
    def run_id(self) -> str:
        """The oldest unfinished run of the thread."""
        return self.inflight[0].run_id


class QueueFull(RecordError):
    """One more waiting run would pass a queue cap (`cap` is which, `limit` its value),
    given the load counted: waiting runs in all, the user's waiting and running ones."""

    def __init__(
        self, cap: QueueCap, limit: int, *, queued: int, user_queued: int, user_running: int
    ) -> None:
        super().__init__(cap)
        self.cap: QueueCap = cap
        self.limit = limit
        self.queued = queued
        self.user_queued = user_queued
        self.user_running = user_running
