"""LangGraph's own sync SQLite saver and store, run on the SQLite worker's thread.

``WorkerSqliteSaver`` and ``WorkerSqliteStore`` are LangGraph's ``SqliteSaver`` and
``SqliteStore`` — their SQL, serialization and migrations, unchanged — with a thin async
face: each async method runs the sync one on the worker thread (one hop). Checkpoint writes
(``aput``, ``aput_writes``, ``adelete_thread``) go through the worker's group commit, so
checkpoints of concurrent runs share transactions and a caller resumes only after its
commit (``sync`` durability keeps its meaning). For that the saver's ``cursor()`` leaves
the commit to the worker instead of committing itself. The store manages its own
transactions (``BEGIN``/``COMMIT``), so its batches run as exclusive units between groups.

The saver also implements the contract's history rewrites LangGraph's ``SqliteSaver`` lacks
— ``adelete_for_runs``, ``acopy_thread``, ``aprune`` — each one write unit of the worker,
so one transaction (``runtime/checkpoints/sqlite_history.py``); ``setup`` adds an index on the
metadata's ``run_id`` for the first.

Nothing here touches a private attribute of LangGraph or aiosqlite, and no lock is
overwritten: both classes keep their own ``threading.Lock``, uncontended on one thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sqlite3
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Mapping, Sequence
from typing import TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import Op, Result, TTLConfig
from langgraph.store.sqlite import SqliteStore  # pyright: ignore[reportMissingTypeStubs]  # a langgraph subpackage without py.typed

from pronghorn.persistence.db import is_busy_error
from pronghorn.persistence.sqlite_worker import SqliteWorker
from pronghorn.runtime.checkpoints import sqlite_history

log = logging.getLogger("pronghorn.store")

T = TypeVar("T")

_PRUNE_STRATEGIES = ("keep_latest", "delete")


class WorkerSqliteSaver(SqliteSaver):
    """``SqliteSaver`` on the worker's connection, with async methods that hop to it."""

    def __init__(self, worker: SqliteWorker) -> None:
        super().__init__(worker.connection)
        self.worker = worker

    async def asetup(self) -> None:
        await self.worker.call(self.setup, exclusive=True)

    def setup(self) -> None:
        if self.is_setup:
            return
        super().setup()
        self.conn.execute(sqlite_history.RUN_ID_INDEX)

    @contextlib.contextmanager
    def cursor(self, transaction: bool = True) -> Generator[sqlite3.Cursor, None, None]:
        # Runs on the worker thread only. A write is a unit of a worker group: the group
        # commits it (with its neighbours), so the cursor must not commit on its own.
        cur = self.conn.cursor()
        try:
            yield cur
        finally:
            cur.close()

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.worker.call(lambda: self.get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, object] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await self.worker.call(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self.worker.write(
            lambda _conn: self.put(config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, object]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.worker.write(lambda _conn: self.put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self.worker.write(lambda _conn: self.delete_thread(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints of these runs, with their writes, from every thread. A kept
        checkpoint whose parent goes is re-pointed at its nearest kept ancestor, so the thread
        reads as if the runs had never been."""
        ids = _ids(run_ids, "run_ids")
        if ids:
            await self._rewrite(lambda conn: sqlite_history.delete_for_runs(conn, ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and pending write of one thread to another, as stored
        (checkpoint ids kept)."""
        src, dst = str(source_thread_id), str(target_thread_id)
        await self._rewrite(lambda conn: sqlite_history.copy_thread(conn, src, dst))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: keep the latest checkpoint of each namespace (with its pending
        writes, and no parent); ``delete``: delete the threads' checkpoints. All threads in one
        transaction. ``keep_latest`` refuses (NotImplementedError, nothing pruned) threads
        whose graph uses a ``DeltaChannel``, whose value is rebuilt from older checkpoints."""
        if strategy not in _PRUNE_STRATEGIES:
            raise ValueError(f"Unknown prune strategy: {strategy!r}")
        ids = _ids(thread_ids, "thread_ids")
        if not ids:
            return

        def unit(conn: sqlite3.Connection) -> None:
            if strategy == "delete":
                sqlite_history.delete_threads(conn, ids)
                return
            if delta := sqlite_history.delta_threads(conn, ids):
                raise NotImplementedError(
                    f"keep_latest can't prune threads that use a DeltaChannel: {', '.join(delta)}"
                )
            sqlite_history.keep_latest(conn, ids)

        await self._rewrite(unit)

    async def _rewrite(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` on the saver's connection as one write unit (one transaction), tried again
        with backoff while another process holds the database."""
        delay = 0.01
        for attempt in range(8):
            try:
                return await self.worker.write(lambda _conn: fn(self.conn))
            except sqlite3.OperationalError as exc:
                if not is_busy_error(exc) or attempt == 7:
                    raise
                await asyncio.sleep(delay + random.uniform(0, delay))
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self.worker.call(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


def _ids(ids: Sequence[str], name: str) -> list[str]:
    if isinstance(ids, str):
        raise TypeError(f"{name} must be a sequence of ids, not a str")
    return [str(i) for i in ids]


class WorkerSqliteStore(SqliteStore):
    """``SqliteStore`` on the worker's connection; ``abatch`` and ``sweep_ttl`` hop to it.
    The periodic TTL sweep is an asyncio task (``start_sweeper``): LangGraph's sweeper would
    use the connection from a thread of its own."""

    def __init__(self, worker: SqliteWorker, *, ttl: TTLConfig | None = None) -> None:
        # Registers a SQL function on the connection: construct it on the worker thread,
        # with `open()`.
        super().__init__(worker.connection, ttl=ttl)
        self.worker = worker
        self._sweeper: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, worker: SqliteWorker, *, ttl: TTLConfig | None = None) -> WorkerSqliteStore:
        """A store built and set up (tables, migrations) on the worker thread."""

        def build() -> WorkerSqliteStore:
            store = cls(worker, ttl=ttl)
            store.setup()
            return store

        return await worker.call(build, exclusive=True)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        return await self.worker.call(lambda: self.batch(ops), exclusive=True)

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        """Delete expired items, on the worker (async, like the other stores' ``sweep_ttl``;
        LangGraph's sync version runs there)."""
        return await self.worker.call(lambda: SqliteStore.sweep_ttl(self), exclusive=True)

    async def start_sweeper(self) -> None:
        if not self.ttl_config or self._sweeper is not None:
            return
        interval = float(self.ttl_config.get("sweep_interval_minutes") or 5) * 60
        self._sweeper = asyncio.create_task(self._sweep_every(interval), name="store-ttl")

    async def _sweep_every(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                expired = await self.sweep_ttl()
                if expired:
                    log.info("store swept expired items", extra={"count": expired})
            except Exception:
                log.exception("store TTL sweep failed")

    async def stop_sweeper(self) -> None:
        task, self._sweeper = self._sweeper, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
