"""Whether an error means the database (or the connection to it) is unavailable right now —
refused, reset, dropped, or no pooled connection free in time — rather than a bug or bad
input: the gateway answers those with 503 and `Retry-After`, and retrying later works."""

from __future__ import annotations

from collections.abc import Iterator

import asyncpg  # pyright: ignore[reportMissingTypeStubs]
import psycopg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

_DRIVER_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,  # connection lost, cannot connect now, …
    asyncpg.InterfaceError,  # "connection is closed" and other client-side states
    psycopg.OperationalError,  # LangGraph's saver and store (psycopg)
    PoolTimeout,  # every pooled connection busy for pool_timeout
)

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
    for err in _chain(exc):
        if isinstance(err, (ConnectionError, *_DRIVER_ERRORS)):
            return True
        if isinstance(err, DBAPIError) and err.connection_invalidated:
            return True
        state = getattr(err, "sqlstate", None)
        if isinstance(state, str) and state.startswith(_SQLSTATES):
            return True
    return False
