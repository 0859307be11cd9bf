"""One thread with a read-only ``sqlite3`` connection of its own, for read units.

In WAL mode a reader never waits for the writer, so reads kept off the worker thread
(``persistence/sqlite_worker.py``) never queue behind a write group and a write group never
waits for a slow listing. Each read unit runs in one transaction (``BEGIN`` … ``ROLLBACK``:
one consistent snapshot) in a single thread hop, like the worker's units. The connection has
``query_only`` on, so a unit that tries to write fails instead of racing the worker.
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
from pronghorn.persistence.sqlite_worker import ThreadJob, WorkerClosed, serve_jobs

T = TypeVar("T")


class SqliteReader:
    """The SQLite file's read connection; see the module docstring."""

    def __init__(
        self, path: str, *, pragmas: Sequence[str] = (), busy_timeout_ms: int = 5000
    ) -> None:
        self.path = path
        self.pragmas = tuple(pragmas)
        self.busy_timeout_ms = busy_timeout_ms
        self._jobs: queue.SimpleQueue[ThreadJob | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._engine: Engine | None = None
        self._sa: Connection | None = None

    async def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=serve_jobs, args=(self._jobs,), name="sqlite-reader")
        self._thread.start()
        self._conn, self._engine, self._sa = await self._hop(self._connect)

    def _connect(self) -> tuple[sqlite3.Connection, Engine, Connection]:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
        for pragma in self.pragmas:
            if "journal_mode" not in pragma:  # the worker's to set
                conn.execute(pragma)
        conn.execute("PRAGMA query_only=ON")
        engine = create_engine(
            "sqlite://",
            creator=lambda: conn,
            poolclass=StaticPool,
            pool_reset_on_return=None,
            json_serializer=json_dumps,
            json_deserializer=json_loads,
        )
        # As the worker: one SQLAlchemy connection inside a never-ended SQLAlchemy-level
        # transaction; the real BEGIN / ROLLBACK are ours (see read).
        sa = engine.connect()
        sa.begin()
        return conn, engine, sa

    async def _hop(self, fn: Callable[[], T]) -> T:
        if self._thread is None:
            raise WorkerClosed("the SQLite reader is not running")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put(ThreadJob(fn, future, loop))
        return await future

    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` in one read transaction (a consistent snapshot), rolled back."""
        conn, sa = self._conn, self._sa
        if conn is None or sa is None:
            raise WorkerClosed("the SQLite reader is not running")

        def unit() -> T:
            conn.execute("BEGIN")
            try:
                return fn(sa)
            finally:
                conn.execute("ROLLBACK")

        return await self._hop(unit)

    async def close(self) -> None:
        if self._thread is None:
            return
        sa, engine, conn = self._sa, self._engine, self._conn
        self._sa = self._engine = self._conn = None

        def shut() -> None:
            if sa is not None:
                sa.invalidate()
            if engine is not None:
                engine.dispose()
            if conn is not None:
                conn.close()

        with contextlib.suppress(Exception):
            await self._hop(shut)
        thread, self._thread = self._thread, None
        self._jobs.put(None)
        await asyncio.to_thread(thread.join)
