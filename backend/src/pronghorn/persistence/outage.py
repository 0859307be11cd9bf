"""Whether an error means the database (or the connection to it) is unavailable right now —
refused, reset, dropped, or no pooled connection free in time — rather than a bug or bad
input: the gateway answers those with 503 and `Retry-After`, and retrying later works."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout


def _driver_errors() -> tuple[type[BaseException], ...]:
    """The driver errors that mean "unreachable", of the PostgreSQL drivers in use: a driver
    never imported raised nothing, and importing both costs every SQLite start ~0.2 s."""
    found: list[type[BaseException]] = [PoolTimeout]  # every pooled connection busy
    if "asyncpg" in sys.modules:
        import asyncpg  # pyright: ignore[reportMissingTypeStubs]

        found += [
            asyncpg.PostgresConnectionError,  # connection lost, cannot connect now, …
            asyncpg.InterfaceError,  # "connection is closed" and other client-side states
        ]
    if "psycopg" in sys.modules:
        import psycopg

        found.append(psycopg.OperationalError)  # LangGraph's saver and store (psycopg)
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
