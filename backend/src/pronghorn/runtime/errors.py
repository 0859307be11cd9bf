"""The runtime's own errors: what went wrong with a run, thread or assistant, in domain terms.

The runtime never speaks HTTP; the gateway maps each kind to a status (gateway/errors.py).
Every error carries a message meant for the client, as is.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from pronghorn.persistence.errors import (
    AssistantExists,
    AssistantMissing,
    CronMissing,
    FeedbackMissing,
    RecordError,
    ThreadBusy,
    ThreadExists,
    ThreadMissing,
)

# re-exported: the gateway answers 503 for these (persistence/outage.py tells them apart)
from pronghorn.persistence.outage import is_database_unreachable as is_database_unreachable


class DomainError(Exception):
    """Base of every error the runtime raises on purpose; `message` is for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    """A run, thread, assistant or graph that does not exist (or is not loaded)."""

    @classmethod
    def of(cls, what: str, ident: str) -> NotFound:
        return cls(f"{what} with ID {ident} not found")


class Forbidden(DomainError):
    """The principal may not do this (an authorization policy refused it, or a user tried
    to change a shared system assistant)."""


class Conflict(DomainError):
    """The request clashes with the current state: a busy thread, a run already finished."""


class InvalidRun(DomainError):
    """A run request that can never be run as given (an unknown model, a bad message)."""


class InvalidRequest(DomainError):
    """A request the runtime cannot apply as given (e.g. a state update the graph rejects)."""


class Unprocessable(DomainError):
    """A well-formed request that lacks what it needs to be applied (e.g. supersteps on a
    thread with no known graph)."""


class RefusedRun(DomainError):
    """A well-formed run request the server refuses by policy (e.g. a private webhook URL)."""


class TooLarge(DomainError):
    """Content past a configured size limit (an upload over the per-file or per-thread
    total): nothing of it was kept."""


class Unavailable(DomainError):
    """The runtime cannot take the request right now (it is shutting down); retry later."""


class InvalidInput(Unprocessable):
    """Input that breaks the rules of what it describes (a bad skill archive, agent name):
    422 like every `Unprocessable`."""


class Overloaded(DomainError):
    """A cap on queued or concurrent runs (or on a user's request rate) is reached: nothing
    was accepted; retry after `retry_after_s` seconds."""

    def __init__(self, message: str, *, retry_after_s: float, reason: str) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.reason = reason


def domain_error(exc: RecordError) -> DomainError:
    """The runtime's error for what a repository unit refused (persistence/errors.py); the
    one place they are mapped. (`QueueFull` is the admission's to refuse: it counts it and
    knows when to retry: engine/admission.py, `Admission.refuse`.)"""
    if isinstance(exc, AssistantMissing):
        return NotFound.of("Assistant", exc.ref)
    if isinstance(exc, ThreadMissing):
        return NotFound.of("Thread", exc.thread_id)
    if isinstance(exc, AssistantExists):
        return Conflict(f"Assistant {exc.assistant_id} already exists")
    if isinstance(exc, ThreadExists):
        return Conflict(f"Thread {exc.thread_id} already exists")
    if isinstance(exc, CronMissing):
        return NotFound.of("Cron", exc.cron_id)
    if isinstance(exc, FeedbackMissing):
        return NotFound(f"No feedback on run {exc.run_id}")
    if isinstance(exc, ThreadBusy):
        return Conflict(
            f"Thread {exc.thread_id} is busy with run {exc.run_id} (multitask_strategy=reject)"
        )
    return Conflict(str(exc))


@contextmanager
def refusals_mapped() -> Generator[None]:
    """Raise the runtime's error (`domain_error`) for a repository unit's refusal raised
    inside."""
    try:
        yield
    except RecordError as exc:
        raise domain_error(exc) from None
