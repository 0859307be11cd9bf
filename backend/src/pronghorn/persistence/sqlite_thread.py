"""One plain ``sqlite3`` connection on a thread of its own, reached in one hop per unit.

Every unit of work — a synchronous function — runs on that one thread in a single hop (a
``queue.SimpleQueue`` to the thread, ``loop.call_soon_threadsafe`` back: half the cost of
``loop.run_in_executor``'s future chaining, see docs/performance.md), so a unit of several
statements costs one thread switch, not one per statement.

The connection is created on the thread with ``check_same_thread`` on, so any use from
another thread (the event loop) fails loudly instead of blocking it. SQLAlchemy drives it
through a sync engine whose pool hands out this one connection, kept inside one
SQLAlchemy-level transaction that is never ended: with the driver in autocommit mode
(``isolation_level=None``) that emits nothing and keeps SQLAlchemy from ever rolling back on
its own; the real ``BEGIN`` / ``COMMIT`` / ``ROLLBACK`` are the callers'.

Two of these share the SQLite file (``persistence/db.py``): the ``SqliteWorker``'s
(``persistence/sqlite_worker.py``: writes, group commit, LangGraph's saver and store) and a
read-only one for reads. In WAL mode a reader never waits for the writer, so reads kept off
the worker thread never queue behind a write group and a write group never waits for a slow
listing. The read-only connection has ``query_only`` on, so a unit that tries to write fails
instead of racing the worker, and it leaves ``journal_mode`` to the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from pronghorn.persistence.json_codec import json_dumps, json_loads

T = TypeVar("T")

# A job on the thread's queue: it runs the unit and hands the outcome back to its loop.
# ``None`` ends the thread.
_Job = Callable[[], None]


class WorkerClosed(RuntimeError):
    """The SQLite thread was closed (or not started); no more units of work are accepted."""


class SqliteThread:
    """A SQLite connection on its own thread; see the module docstring."""

    def __init__(
        self,
        path: str,
        *,
        name: str,
        pragmas: Sequence[str] = (),
        busy_timeout_ms: int = 5000,
        read_only: bool = False,
        echo: bool = False,
    ) -> None:
        self.path = path
        self.name = name
        self.pragmas = tuple(pragmas)
        self.busy_timeout_ms = busy_timeout_ms
        self.read_only = read_only
        self.echo = echo
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._engine: Engine | None = None
        self._sa: Connection | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    async def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=_serve, args=(self._jobs,), name=self.name)
        self._thread.start()
        self._conn, self._engine, self._sa = await self.call(self._connect)

    def _connect(self) -> tuple[sqlite3.Connection, Engine, Connection]:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
        for pragma in self.pragmas:
            if not (self.read_only and "journal_mode" in pragma):  # the writer's to set
                conn.execute(pragma)
        if self.read_only:
            conn.execute("PRAGMA query_only=ON")
        engine = create_engine(
            "sqlite://",
            creator=lambda: conn,
            poolclass=StaticPool,
            pool_reset_on_return=None,
            echo=self.echo,
            json_serializer=json_dumps,
            json_deserializer=json_loads,
        )
        sa = engine.connect()
        sa.begin()  # never ended: see the module docstring
        return conn, engine, sa

    async def close(self) -> None:
        """Close the connection (on its thread), then end the thread."""
        if self._thread is None:
            return
        sa, engine, conn = self._sa, self._engine, self._conn
        self._sa = self._engine = self._conn = None

        def shut() -> None:
            if sa is not None:
                sa.invalidate()  # drop SQLAlchemy's hold without a rollback
            if engine is not None:
                engine.dispose()
            if conn is not None:
                conn.close()

        with contextlib.suppress(Exception):
            await self.call(shut)
        thread, self._thread = self._thread, None
        self._jobs.put(None)
        await asyncio.to_thread(thread.join)

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection, for code that runs *on this thread*; using it from any other
        thread raises ``ProgrammingError``."""
        return self.require()[0]

    def require(self) -> tuple[sqlite3.Connection, Connection]:
        """The driver connection and the SQLAlchemy one over it, for units run by ``call``."""
        if self._conn is None or self._sa is None:
            raise WorkerClosed(f"the SQLite thread {self.name!r} is not running")
        return self._conn, self._sa

    async def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the thread (one hop there and back) and return its outcome."""
        if self._thread is None:
            raise WorkerClosed(f"the SQLite thread {self.name!r} is not running")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def job() -> None:
            try:
                value = fn()
            except BaseException as exc:
                loop.call_soon_threadsafe(_fail, future, exc)
            else:
                loop.call_soon_threadsafe(_resolve, future, value)

        self._jobs.put(job)
        return await future

    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` in one read transaction (a consistent snapshot), rolled back."""
        conn, sa = self.require()

        def unit() -> T:
            conn.execute("BEGIN")
            try:
                return fn(sa)
            finally:
                conn.execute("ROLLBACK")

        return await self.call(unit)


def _serve(jobs: queue.SimpleQueue[_Job | None]) -> None:
    """The thread: run each job until the ``None`` that ends it."""
    while (job := jobs.get()) is not None:
        job()


def _resolve(future: asyncio.Future[T], value: T) -> None:
    if not future.done():  # its caller may have been cancelled meanwhile
        future.set_result(value)


def _fail(future: asyncio.Future[T], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
