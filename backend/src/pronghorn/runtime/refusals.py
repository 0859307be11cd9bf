"""The runtime's error for what the threads, crons and feedback repositories refuse
(persistence/thread_errors.py): the one place they are mapped."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from pronghorn.persistence.thread_errors import (
    CronMissing,
    FeedbackMissing,
    RecordRefusal,
    ThreadMissing,
)
from pronghorn.runtime.errors import Conflict, DomainError, NotFound


def refusal_error(exc: RecordRefusal) -> DomainError:
    """The runtime's error for a repository unit's refusal."""
    if isinstance(exc, ThreadMissing):
        return NotFound.of("Thread", exc.thread_id)
    if isinstance(exc, CronMissing):
        return NotFound.of("Cron", exc.cron_id)
    if isinstance(exc, FeedbackMissing):
        return NotFound(f"No feedback on run {exc.run_id}")
    return Conflict(str(exc))


@contextmanager
def refusals_mapped() -> Generator[None]:
    """Raise the runtime's error (`refusal_error`) for a refusal raised inside."""
    try:
        yield
    except RecordRefusal as exc:
        raise refusal_error(exc) from None
