"""The SQLite file's write connection: a ``SqliteThread`` with group commit on top.

The connection lives on a thread of its own (``persistence/sqlite_thread.py``: one hop per
unit, ``check_same_thread`` on). Writes submitted while the thread is busy are queued; when
it is free they all run in **one** transaction, each unit inside its own savepoint (a unit
that raises is rolled back alone and its caller gets the exception), and every caller is
resumed only after the shared ``COMMIT`` returned: a write is durable when its ``await``
returns, as with a transaction of its own. Under load N concurrent writers cost one hop and
one commit instead of N.

LangGraph's sync ``SqliteSaver`` and ``SqliteStore`` use the raw connection directly, on the
worker thread (see ``runtime/checkpoints/sqlite_checkpoint.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy.engine import Connection

from pronghorn.persistence.sqlite_thread import SqliteThread, WorkerClosed

log = logging.getLogger("pronghorn.db")

T = TypeVar("T")


@dataclass
class _Write(Generic[T]):
    fn: Callable[[Connection], T]
    future: asyncio.Future[T]


@dataclass
class _Outcome:
    value: object = None
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
        # Held around every write group, so writes on other connections of this process
        # that take the same lock (the async engine's) never interleave with a group.
        self.lock = lock or asyncio.Lock()
        self.stats = GroupStats()
        self._sqlite = SqliteThread(
            path, name="sqlite-worker", pragmas=pragmas, busy_timeout_ms=busy_timeout_ms, echo=echo
        )
        # Any: each queued write has its own result type (its future's)
        self._queue: list[_Write[Any]] = []
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._closing = False

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        if self._sqlite.running:
            return
        await self._sqlite.start()
        self._closing = False
        self._flusher = asyncio.create_task(self._flush_loop(), name="sqlite-group-commit")

    async def close(self) -> None:
        """Finish every queued write, then close the connection and the thread."""
        if not self._sqlite.running:
            return
        self._closing = True
        self._wake.set()
        if self._flusher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
        await self._sqlite.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection, for code that runs *on the worker thread* (LangGraph's sync
        saver and store); using it from any other thread raises ``ProgrammingError``."""
        return self._sqlite.connection

    # --- units of work ------------------------------------------------------------------------

    async def call(self, fn: Callable[[], T], *, exclusive: bool = False) -> T:
        """Run ``fn()`` on the worker thread, outside any transaction of ours (for code that
        manages its own, like LangGraph's store, or plain reads). ``exclusive`` holds the
        write lock around it."""
        if not exclusive:
            return await self._sqlite.call(fn)
        async with self.lock:
            return await self._sqlite.call(fn)

    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` in one read transaction (a consistent snapshot), rolled back."""
        return await self._sqlite.read(fn)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` as a write, committed — possibly together with the writes of
        other callers — before this returns. If ``fn`` raises, its own changes are rolled
        back and the exception is raised here; the other writes of its group are not
        affected. A caller cancelled before its group starts is dropped from it."""
        self._sqlite.require()
        if self._closing:
            raise WorkerClosed("the SQLite worker is closing")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Write(fn, future))
        self._wake.set()
        return await future

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

    async def _flush(self, group: list[_Write[Any]]) -> None:  # Any: as _queue
        conn, sa = self._sqlite.require()
        fns = [w.fn for w in group]
        try:
            async with self.lock:
                outcomes = await self._sqlite.call(lambda: _run_group(conn, sa, fns))
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
    conn: sqlite3.Connection, sa: Connection, fns: list[Callable[[Connection], object]]
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
