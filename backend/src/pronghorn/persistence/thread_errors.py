"""What the threads, crons and feedback repositories refuse, as typed values: the unit
raises one (its transaction rolls back) and the runtime maps it to its own error in one
place (runtime/refusals.py). These repositories never raise the runtime's errors.

A lookup that finds nothing returns None, and the deletes that sweeps and user removal
share (a thread, a cron) say whether there was anything to delete: neither is a refusal."""

from __future__ import annotations


class RecordRefusal(Exception):
    """Base of every refusal these repository units raise on purpose."""


class ThreadMissing(RecordRefusal):
    """No thread by this id (to change)."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(thread_id)
        self.thread_id = thread_id


class CronMissing(RecordRefusal):
    """No cron by this id (to change)."""

    def __init__(self, cron_id: str) -> None:
        super().__init__(cron_id)
        self.cron_id = cron_id


class FeedbackMissing(RecordRefusal):
    """No feedback of this user on this run (to remove, or to read back once set)."""

    def __init__(self, run_id: str, user_id: str) -> None:
        super().__init__(run_id, user_id)
        self.run_id = run_id
        self.user_id = user_id
