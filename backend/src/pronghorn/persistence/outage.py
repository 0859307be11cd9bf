"""Whether an error means the database (or the connection to it) is unavailable right now —
refused, reset, dropped, or no pooled connection free in time — rather than a bug or bad
input: the gateway answers those with 503 and `Retry-After`, and retrying later works."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

T = TypeVar("T")

log = logging.getLogger("pronghorn.db")

FIRST_DELAY_S = 0.2
MAX_DELAY_S = 2.0


def _driver_errors() -> tuple[type[BaseException], ...]:
    """The driver errors that mean "unreachable", of the PostgreSQL drivers in use: a driver
    never imported raised nothing, and importing both costs every SQLite start ~0.2 s."""
    found: list[type[BaseException]] = [PoolTimeout]  # every pooled connection busy
    if "asyncpg" in sys.modules:  # the app's tables
        import asyncpg  # pyright: ignore[reportMissingTypeStubs]

        found += [
            asyncpg.PostgresConnectionError,  # connection lost, cannot connect now, …
            asyncpg.InterfaceError,  # "connection is closed" and other client-side states
        ]
    if "psycopg" in sys.modules:  # LangGraph's saver and store, the doctor
        import psycopg

        # Connection refused or lost, server shutting down, "the connection is closed".
        found.append(psycopg.OperationalError)
    return tuple(found)


# Server-side SQLSTATE classes that mean "not now": 08 connection exception,
# 57P01..57P03 admin shutdown / crash shutdown / cannot connect now.
_SQLSTATES = ("08", "57P01", "57P02", "57P03")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for nxt in (getattr(current, "orig", None), current.__cause__, current.__context__):
            if isinstance(nxt, BaseException):
                todo.append(nxt)


def is_database_unreachable(exc: BaseException) -> bool:
    unreachable = (ConnectionError, *_driver_errors())
    for err in _chain(exc):
        if isinstance(err, unreachable):
            return True
        if isinstance(err, DBAPIError) and err.connection_invalidated:
            return True
        state = getattr(err, "sqlstate", None)
        if isinstance(state, str) and state.startswith(_SQLSTATES):
            return True
    return False


class OutageLog:
    """How a background loop reports a failed pass: a traceback for a bug, but one warning
    per database outage (not a traceback every try), and one line when it works again."""

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self.logger = logger
        self.what = what
        self.waiting = False

    def failed(self, exc: BaseException) -> None:
        if not is_database_unreachable(exc):
            self.logger.error("%s failed", self.what, exc_info=exc)
        elif not self.waiting:
            self.waiting = True
            self.logger.warning("%s waits: the database is unreachable (%s)", self.what, exc)

    def ok(self) -> None:
        if self.waiting:
            self.waiting = False
            self.logger.info("%s went through: the database is back", self.what)


class OutageWaits:
    """How many writes wait for the database right now — a run's last checkpoints and its
    settle: ``/ready`` shows the count and a gauge follows it (``listeners`` are told each
    change, +1 or -1)."""

    def __init__(self) -> None:
        self.count = 0
        self.listeners: list[Callable[[int], None]] = []

    def _change(self, delta: int) -> None:
        self.count += delta
        for listener in self.listeners:
            listener(delta)

    @contextlib.contextmanager
    def one(self) -> Generator[None]:
        self._change(1)
        try:
            yield
        finally:
            self._change(-1)


class OutageOutlasted(Exception):
    """The database stayed unreachable longer than the wait allowed (`outlast_outage`)."""

    def __init__(self, what: str, waited_s: float, last: BaseException) -> None:
        super().__init__(f"{what}: the database was unreachable for {waited_s:.0f}s ({last})")
        self.what = what
        self.waited_s = waited_s
        self.last = last


async def outlast_outage(
    fn: Callable[[], Awaitable[T]],
    *,
    what: str,
    within_s: float | None = None,
    waits: OutageWaits | None = None,
) -> T:
    """Run ``fn`` until it succeeds or fails for another reason than an unreachable database:
    while the database is away, try again with backoff (capped at ``MAX_DELAY_S``) — for a
    write that must happen once the database is back, such as a finished run's settle.
    ``within_s``: past this many seconds since the first failure, raise `OutageOutlasted`
    instead of trying again (None: no limit). ``waits`` counts this call while it waits.
    Cancelling the caller (shutdown) ends the wait."""
    delay = FIRST_DELAY_S
    report = OutageLog(log, what)
    first_failure: float | None = None
    with contextlib.ExitStack() as waiting:
        while True:
            try:
                result = await fn()
            except Exception as exc:
                if not is_database_unreachable(exc):
                    raise
                now = time.monotonic()
                if first_failure is None:
                    first_failure = now
                    if waits is not None:
                        waiting.enter_context(waits.one())
                report.failed(exc)
                waited = now - first_failure
                if within_s is not None and waited >= within_s:
                    raise OutageOutlasted(what, waited, exc) from exc
                pause = delay if within_s is None else min(delay, within_s - waited)
                await asyncio.sleep(pause)
                delay = min(delay * 2, MAX_DELAY_S)
                continue
            report.ok()
            return result
