"""Liveness checks of pooled PostgreSQL connections, only where one can have gone stale.

A connection handed out again within `IDLE_CHECK_S` of being returned (psycopg's pool: of
being handed out before) was working a moment ago; checking it anyway (SQLAlchemy's
`pool_pre_ping`: BEGIN, an empty query, ROLLBACK; the psycopg pool's `check_connection`: an
empty query) cost a run about six extra round trips and a tenth of its CPU on the hot path,
where connections come back within milliseconds.
A connection idle for longer is checked as before, and a stale one replaced without the
caller noticing (the usual case: the database restarted, or dropped idle connections).

What this gives up, for SQLAlchemy's pool (the API's requests): a connection the server
dropped within `IDLE_CHECK_S` of its last use fails the one unit of work that picks it up (as
a connection lost in the middle of a unit always does: a 503 the client retries); SQLAlchemy
then invalidates the whole pool, so the next units reconnect. The psycopg pool (LangGraph's
checkpointer: a failure there fails a run) also checks a recently used connection whose
socket has something to read while idle — what a server that closed it (a restart, a proxy
gone) leaves — with a zero-timeout poll of the socket, no round trip.
"""

from __future__ import annotations

import select
import time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from sqlalchemy import event, exc

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from sqlalchemy.engine import Engine
    from sqlalchemy.engine.interfaces import DBAPIConnection
    from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

    # A pooled psycopg connection (Any: its rows are what the pool's row factory makes)
    PgConnection = AsyncConnection[Any]

IDLE_CHECK_S = 1.0
_RETURNED = "pronghorn_returned_at"


def check_idle_connections(engine: Engine, idle_s: float = IDLE_CHECK_S) -> None:
    """Ping a connection SQLAlchemy's pool hands out when it sat idle more than `idle_s`
    (instead of `pool_pre_ping`, which pings on every checkout)."""

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry) -> None:  # pyright: ignore[reportUnusedFunction]
        record.info[_RETURNED] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(  # pyright: ignore[reportUnusedFunction]
        dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry, proxy: PoolProxiedConnection
    ) -> None:
        returned: float | None = record.info.get(_RETURNED)
        if returned is None or time.monotonic() - returned < idle_s:
            return  # new (just connected), or in use a moment ago
        # As pool_pre_ping does: a failed ping invalidates the pool's older connections too
        # (they went stale together), and the pool hands out a new one.
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise exc.InvalidatePoolError() from error
        if not alive:
            raise exc.InvalidatePoolError()


class IdleConnectionCheck:
    """The `check` callback of a psycopg pool: a connection not handed out for more than
    `idle_s` is checked before it is handed out again (a stale one is replaced).

    Idle is counted from when the connection was last handed out, not from its return: an
    upper bound of its idle time (a use is milliseconds), so no connection is checked less
    than it was. The pool gets no `reset` callback to note returns with: with one, psycopg's
    pool hands every returned connection to a worker task (a queue, a task switch) instead
    of taking it back at once, on every checkpoint write."""

    def __init__(self, idle_s: float = IDLE_CHECK_S) -> None:
        self.idle_s = idle_s
        self._handed: WeakKeyDictionary[PgConnection, float] = WeakKeyDictionary()

    async def check(self, conn: PgConnection) -> None:
        now = time.monotonic()
        handed = self._handed.get(conn)
        recent = handed is not None and now - handed < self.idle_s
        if not recent or _peer_spoke(conn):
            from psycopg_pool import AsyncConnectionPool

            await AsyncConnectionPool.check_connection(conn)
        self._handed[conn] = now


def _peer_spoke(conn: PgConnection) -> bool:
    """Whether an idle connection's socket is readable: the server closed it (EOF), or sent
    something unasked (a termination notice). Either way it is worth a real check."""
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except (OSError, ValueError):
        return True  # no usable socket: let the real check decide
    return bool(readable)
