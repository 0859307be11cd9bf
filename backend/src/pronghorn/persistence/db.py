"""The one owner of database connections, and the one way to use them.

Every repository function is a synchronous unit of work over SQLAlchemy Core,
``def unit(conn: Connection, ...) -> Record``; callers run one with ``await db.write(unit)``
(one transaction: committed if it returns, rolled back if it raises) or
``await db.read(unit)`` (one read-only snapshot, rolled back). A unit that needs several
steps with logic between them is one local ``def unit(conn)``. Nothing else reaches a
connection.

SQLite (the default, WAL mode, the stdlib ``sqlite3`` driver only) has two connections to
one file, both owned here, each on a thread of its own so a unit costs one thread hop:

- a ``SqliteWorker`` (``persistence/sqlite_worker.py``) for every write, and LangGraph's
  checkpointer and store: concurrent writes are grouped into one commit;
- a read-only ``SqliteThread`` (``persistence/sqlite_thread.py``, ``query_only``) for every
  read, so a read never queues behind a write group (WAL snapshots need no lock).

PostgreSQL has an asyncpg pool for the app tables (units run through ``run_sync``) and a
psycopg pool for the LangGraph checkpointer and store (those libraries speak psycopg). Two
drivers, measured: on psycopg (SQLAlchemy's ``postgresql+psycopg`` async dialect) the same
units cost ~20-27 % more CPU (docs/performance.md, "one driver per engine?"). Any PostgreSQL
URL is accepted, whichever driver it names: `engine_url` and `libpq_url` map it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from pronghorn.persistence.json_codec import json_dumps, json_loads
from pronghorn.persistence.outage import OutageWaits
from pronghorn.persistence.pool_checks import check_idle_connections
from pronghorn.persistence.sqlite_thread import SqliteThread
from pronghorn.persistence.sqlite_worker import SqliteWorker

log = logging.getLogger("pronghorn.db")

T = TypeVar("T")

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-8000",  # 8 MB of page cache per connection; the OS caches the file too
)


# PostgreSQL: every session's application_name is this and the replica id (lease sweepers
# end a frozen replica's sessions by it: persistence/repos/stale_sessions.py).
SESSION_PREFIX = "pronghorn/"


# The app tables' SQLAlchemy dialect on PostgreSQL (LangGraph's libraries use psycopg).
POSTGRES_DRIVER = "postgresql+asyncpg"


def engine_url(url: str) -> URL:
    """A PostgreSQL URL as the app tables' engine takes it: whichever driver it names
    (postgresql://, postgresql+asyncpg://, postgresql+psycopg://), the asyncpg dialect."""
    return make_url(url).set(drivername=POSTGRES_DRIVER)


def libpq_url(url: str) -> str:
    """A PostgreSQL URL in the libpq form psycopg's own connections take (the checkpointer's
    pool, the doctor): no driver in the scheme."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def default_sqlite_url(data_dir: Path) -> str:
    return f"sqlite:///{(data_dir / 'pronghorn.db').as_posix()}"


def is_busy_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text or "sqlite_busy" in text


class DatabaseError(RuntimeError):
    """The database is not usable as configured (e.g. an in-memory SQLite URL)."""


class Database:
    """Engine, dialect facts and the unit-of-work helpers every repository uses."""

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = 5000,
        pool_size: int = 10,
        pool_timeout_s: float = 30.0,
        idle_in_transaction_timeout_s: float = 0.0,
        statement_timeout_s: float = 0.0,
        replica_id: str | None = None,
        echo: bool = False,
    ) -> None:
        self.url = url
        # This process among the replicas: the run manager's owner id, on its PostgreSQL
        # sessions' application_name.
        self.replica_id = replica_id or uuid.uuid4().hex
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()  # "sqlite" | "postgresql"
        self.busy_timeout_ms = busy_timeout_ms
        self.pool_size = pool_size
        self.pool_timeout_s = pool_timeout_s  # PostgreSQL: both pools' wait for a connection
        self.idle_in_transaction_timeout_s = idle_in_transaction_timeout_s  # PostgreSQL
        self.statement_timeout_s = statement_timeout_s  # PostgreSQL
        self.echo = echo
        self._engine: AsyncEngine | None = None
        self._worker: SqliteWorker | None = None
        self._reader: SqliteThread | None = None
        # SQLite: held by every write group of the worker and by exclusive worker calls.
        self.write_lock: asyncio.Lock | None = asyncio.Lock() if self.is_sqlite else None
        self.sqlite_path: str | None = (parsed.database or ":memory:") if self.is_sqlite else None
        # Writes waiting for the database to be back (a run's last checkpoints, its settle)
        self.outage_waits = OutageWaits()

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def engine(self) -> AsyncEngine:
        """PostgreSQL: the pooled async engine (SQLite has none: its worker and reader own
        the file's two connections)."""
        if self._engine is None:
            raise RuntimeError("not a connected PostgreSQL database")
        return self._engine

    @property
    def sqlite_worker(self) -> SqliteWorker:
        """The SQLite worker (SQLite only): the run engine, checkpointer and store use it."""
        if self._worker is None:
            raise RuntimeError("not a connected SQLite database")
        return self._worker

    def session_settings(self) -> dict[str, str]:
        """PostgreSQL settings of every gateway session (both pools): server-side bounds on
        a transaction, so a replica that froze inside one (SIGSTOP, a stalled VM) loses its
        session, and its row locks, before its runs' leases expire. The idle limit ends a
        session that waits between statements; the statement limit one that waits inside a
        statement or waits for another session's locks. Neither reaches a session frozen
        half-way through a statement's messages: the lease sweeper ends those, found by
        their application_name (persistence/repos/stale_sessions.py)."""
        limits = {
            "idle_in_transaction_session_timeout": self.idle_in_transaction_timeout_s,
            "statement_timeout": self.statement_timeout_s,
        }
        settings = {name: str(round(s * 1000)) for name, s in limits.items() if round(s * 1000)}
        return {"application_name": f"{SESSION_PREFIX}{self.replica_id}", **settings}

    def psycopg_conninfo(self) -> str:
        """The PostgreSQL URL in the libpq form psycopg (LangGraph's saver/store) wants."""
        return libpq_url(self.url)

    def session_options(self) -> str:
        """`session_settings` as libpq's ``options`` (``-c name=value`` each), how the
        checkpointer's psycopg connections are given them at connect."""

        def escaped(value: str) -> str:  # libpq splits options at unescaped spaces
            return value.replace("\\", "\\\\").replace(" ", "\\ ")

        settings = self.session_settings().items()
        return " ".join(f"-c {name}={escaped(value)}" for name, value in settings)

    async def connect(self) -> None:
        if self._engine is not None or self._worker is not None:
            return
        if self.is_sqlite:
            await self._connect_sqlite()
            return
        self._engine = create_async_engine(
            engine_url(self.url),
            pool_size=self.pool_size,
            max_overflow=self.pool_size,
            pool_timeout=self.pool_timeout_s,
            connect_args={"server_settings": self.session_settings()},
            # The most recently returned connection first: the hot path reuses a few warm
            # ones (no liveness check needed, prepared statements cached), idle ones rest.
            pool_use_lifo=True,
            echo=self.echo,
            json_serializer=json_dumps,
            json_deserializer=json_loads,
        )
        check_idle_connections(self._engine.sync_engine)

    async def _connect_sqlite(self) -> None:
        path = self.sqlite_path or ":memory:"
        if path in ("", ":memory:") or path.startswith("file:"):
            raise DatabaseError(
                "SQLite needs a database file (sqlite:///path/to/file.db): the app's tables, "
                "checkpoints and store share it over two connections"
            )
        await asyncio.to_thread(Path(path).parent.mkdir, parents=True, exist_ok=True)
        assert self.write_lock is not None
        worker = SqliteWorker(
            path,
            pragmas=SQLITE_PRAGMAS,
            busy_timeout_ms=self.busy_timeout_ms,
            lock=self.write_lock,
            echo=self.echo,
        )
        await worker.start()  # first: it switches the file to WAL
        self._worker = worker
        reader = SqliteThread(
            path,
            name="sqlite-reader",
            pragmas=SQLITE_PRAGMAS,
            busy_timeout_ms=self.busy_timeout_ms,
            read_only=True,
        )
        await reader.start()
        self._reader = reader

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
        if self._reader is not None:
            await self._reader.close()
            self._reader = None
        if self._worker is not None:
            await self._worker.close()
            self._worker = None

    async def write(self, unit: Callable[[Connection], T]) -> T:
        """Run ``unit(conn)`` — a synchronous unit of work over SQLAlchemy Core — as one
        transaction: committed if it returns, rolled back if it raises. On SQLite it runs on
        the worker thread in a single hop, committed together with the units that other
        callers submitted meanwhile (see `SqliteWorker.write`); on PostgreSQL in a pooled
        connection's transaction through the async driver (``run_sync``)."""
        if self._worker is not None:
            return await self._worker.write(unit)
        # BEGIN, the unit and COMMIT in one greenlet hop (`run_sync`), not three.
        async with self.engine.connect() as conn:
            return await conn.run_sync(_in_transaction, unit)

    async def read(self, unit: Callable[[Connection], T]) -> T:
        """Run ``unit(conn)`` in one read-only transaction (one snapshot), rolled back. On
        SQLite it runs on the reader thread's own connection, so it never queues behind the
        worker's write groups (WAL); on PostgreSQL on a pooled connection."""
        if self._reader is not None:
            return await self._reader.read(unit)
        async with self.engine.connect() as conn:
            return await conn.run_sync(_rolled_back, unit)

    async def retry(self, fn: Callable[[], Awaitable[T]], *, attempts: int = 8) -> T:
        """Run ``fn`` again with backoff while SQLite reports busy/locked."""
        delay = 0.01
        for attempt in range(attempts):
            try:
                return await fn()
            except (OperationalError, sqlite3.OperationalError) as exc:
                if not self.is_sqlite or not is_busy_error(exc) or attempt == attempts - 1:
                    raise
                log.warning("database busy, retrying", extra={"attempt": attempt + 1})
                await asyncio.sleep(delay + random.uniform(0, delay))
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    async def ping(self) -> bool:
        from sqlalchemy import text

        try:
            await self.read(lambda conn: conn.execute(text("SELECT 1")).scalar())
            return True
        except Exception:
            return False


def _in_transaction(conn: Connection, unit: Callable[[Connection], T]) -> T:
    """`unit` in a transaction: committed if it returns, rolled back if it raises."""
    with conn.begin():
        return unit(conn)


def _rolled_back(conn: Connection, unit: Callable[[Connection], T]) -> T:
    """`unit`, then whatever it began rolled back."""
    try:
        return unit(conn)
    finally:
        conn.rollback()
