"""One thread that owns a plain ``sqlite3`` connection, with group commit.

Every unit of work — a synchronous function over the connection — runs on that one thread
in a single hop (a ``queue.SimpleQueue`` to the thread, ``loop.call_soon_threadsafe`` back:
half the cost of ``loop.run_in_executor``'s future chaining, see docs/performance.md), so a
unit of several statements costs one thread switch, not one per statement. Writes submitted
while the thread is busy are queued; when it is free they all run in **one** transaction,
each unit inside its own savepoint (a unit that raises is rolled back alone and its caller
gets the exception), and every caller is resumed only after the shared ``COMMIT`` returned:
a write is durable when its ``await`` returns, as with a transaction of its own. Under load
N concurrent writers cost one hop and one commit instead of N.

The connection is created on the worker thread with ``check_same_thread`` on, so any use
from another thread (the event loop) fails loudly instead of blocking it. SQLAlchemy drives
it through a sync engine whose pool hands out this one connection; LangGraph's sync
``SqliteSaver`` and ``SqliteStore`` use it directly (see
``runtime/checkpoints/sqlite_checkpoint.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from pronghorn.persistence.json_codec import json_dumps, json_loads

log = logging.getLogger("pronghorn.db")

T = TypeVar("T")


class WorkerClosed(RuntimeError):
    """The SQLite worker was closed; no more units of work are accepted."""


@dataclass
class _Write(Generic[T]):
    fn: Callable[[Connection], T]
    future: asyncio.Future[T]


@dataclass
class ThreadJob:
    fn: Callable[[], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop


def serve_jobs(jobs: queue.SimpleQueue[ThreadJob | None]) -> None:
    """The worker thread: run each job, hand its outcome back to the job's event loop."""
    while (job := jobs.get()) is not None:
        try:
            value = job.fn()
        except BaseException as exc:
            job.loop.call_soon_threadsafe(_settle, job.future, None, exc)
        else:
            job.loop.call_soon_threadsafe(_settle, job.future, value, None)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # its caller was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None


@dataclass
class GroupStats:
    """Counters for tests and the bench: how many writes shared how many commits."""

    writes: int = 0
    commits: int = 0
    largest: int = 0

    def record(self, size: int) -> None:
        self.writes += size
        self.commits += 1
        self.largest = max(self.largest, size)


class SqliteWorker:
    """The owner of the SQLite file's hot connection; see the module docstring."""

    def __init__(
        self,
        path: str,
        *,
        pragmas: Sequence[str] = (),
        busy_timeout_ms: int = 5000,
        lock: asyncio.Lock | None = None,
        echo: bool = False,
    ) -> None:
        self.path = path
        self.pragmas = tuple(pragmas)
        self.busy_timeout_ms = busy_timeout_ms
        # Held around every write group, so writes on other connections of this process
        # that take the same lock (the async engine's) never interleave with a group.
        self.lock = lock or asyncio.Lock()
        self.echo = echo
        self.stats = GroupStats()
        self._jobs: queue.SimpleQueue[ThreadJob | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._engine: Engine | None = None
        self._sa: Connection | None = None
        self._queue: list[_Write[Any]] = []
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._closing = False

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=serve_jobs, args=(self._jobs,), name="sqlite-worker")
        self._thread.start()
        self._conn, self._engine, self._sa = await self._hop(self._connect)
        self._closing = False
        self._flusher = asyncio.create_task(self._flush_loop(), name="sqlite-group-commit")

    def _connect(self) -> tuple[sqlite3.Connection, Engine, Connection]:
        # isolation_level=None: the sqlite3 module never begins or commits on its own; this
        # worker issues BEGIN / SAVEPOINT / COMMIT itself (and LangGraph's store its own).
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
        for pragma in self.pragmas:
            conn.execute(pragma)
        engine = create_engine(
            "sqlite://",
            creator=lambda: conn,
            poolclass=StaticPool,
            pool_reset_on_return=None,
            echo=self.echo,
            json_serializer=json_dumps,
            json_deserializer=json_loads,
        )
        # One SQLAlchemy connection over it for the worker's lifetime, kept inside one
        # SQLAlchemy-level transaction that is never ended: with the driver in autocommit
        # mode that emits nothing, and it keeps SQLAlchemy from ever rolling back on its
        # own. The real transaction boundaries are the worker's (see _run_group).
        sa = engine.connect()
        sa.begin()
        return conn, engine, sa

    async def close(self) -> None:
        """Finish every queued write, then close the connection and the thread."""
        if self._thread is None:
            return
        self._closing = True
        self._wake.set()
        if self._flusher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
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
            await self._hop(shut)
        thread, self._thread = self._thread, None
        self._jobs.put(None)
        await asyncio.to_thread(thread.join)

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection, for code that runs *on the worker thread* (LangGraph's sync
        saver and store); using it from any other thread raises ``ProgrammingError``."""
        if self._conn is None:
            raise WorkerClosed("the SQLite worker is not running")
        return self._conn

    # --- units of work ------------------------------------------------------------------------

    async def _hop(self, fn: Callable[[], T]) -> T:
        if self._thread is None:
            raise WorkerClosed("the SQLite worker is not running")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put(ThreadJob(fn, future, loop))
        return await future

    async def call(self, fn: Callable[[], T], *, exclusive: bool = False) -> T:
        """Run ``fn()`` on the worker thread, outside any transaction of ours (for code that
        manages its own, like LangGraph's store, or plain reads). ``exclusive`` holds the
        write lock around it."""
        if not exclusive:
            return await self._hop(fn)
        async with self.lock:
            return await self._hop(fn)

    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` in one read transaction (a consistent snapshot), rolled back."""
        conn, sa = self._require()

        def unit() -> T:
            conn.execute("BEGIN")
            try:
                return fn(sa)
            finally:
                conn.execute("ROLLBACK")

        return await self._hop(unit)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` as a write, committed — possibly together with the writes of
        other callers — before this returns. If ``fn`` raises, its own changes are rolled
        back and the exception is raised here; the other writes of its group are not
        affected. A caller cancelled before its group starts is dropped from it."""
        self._require()
        if self._closing:
            raise WorkerClosed("the SQLite worker is closing")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Write(fn, future))
        self._wake.set()
        return await future

    def _require(self) -> tuple[sqlite3.Connection, Connection]:
        if self._conn is None or self._sa is None:
            raise WorkerClosed("the SQLite worker is not running")
        return self._conn, self._sa

    # --- group commit -------------------------------------------------------------------------

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                group = [w for w in self._queue if not w.future.done()]
                self._queue = []
                if group:
                    await self._flush(group)
            if self._closing and not self._queue:
                return

    async def _flush(self, group: list[_Write[Any]]) -> None:
        conn, sa = self._require()
        fns = [w.fn for w in group]
        try:
            async with self.lock:
                outcomes = await self._hop(lambda: _run_group(conn, sa, fns))
        except BaseException as exc:  # the hop itself failed (or we are being cancelled)
            for w in group:
                if not w.future.done():
                    w.future.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        self.stats.record(len(group))
        for w, outcome in zip(group, outcomes, strict=True):
            if w.future.done():
                continue
            if outcome.error is not None:
                w.future.set_exception(outcome.error)
            else:
                w.future.set_result(outcome.value)


def _run_group(
    conn: sqlite3.Connection, sa: Connection, fns: list[Callable[[Connection], Any]]
) -> list[_Outcome]:
    """On the worker thread: every unit in one transaction, each in a savepoint of its own
    (raw statements on the driver: a few microseconds each, where SQLAlchemy's nested
    transactions cost more than the units)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except Exception as exc:
        return [_Outcome(error=exc) for _ in fns]
    outcomes: list[_Outcome] = []
    try:
        if len(fns) == 1:
            # Alone in its group: its failure rolls back the whole transaction.
            try:
                outcomes.append(_Outcome(value=fns[0](sa)))
            except Exception as exc:
                _rollback(conn)
                return [_Outcome(error=exc)]
        else:
            for fn in fns:
                conn.execute("SAVEPOINT unit")
                try:
                    value = fn(sa)
                except Exception as exc:
                    conn.execute("ROLLBACK TO unit")
                    conn.execute("RELEASE unit")
                    outcomes.append(_Outcome(error=exc))
                else:
                    conn.execute("RELEASE unit")
                    outcomes.append(_Outcome(value=value))
        conn.execute("COMMIT")
    except BaseException as exc:
        # A savepoint statement or COMMIT failed: nothing of the group was committed.
        _rollback(conn)
        if not isinstance(exc, Exception):
            raise
        return [_Outcome(error=exc) for _ in fns]
    return outcomes


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
