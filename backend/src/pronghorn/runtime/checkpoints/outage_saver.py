"""LangGraph's PostgreSQL checkpointer, whose writes wait through a short database outage.

A run that writes a checkpoint (or a task's writes) while PostgreSQL is away waits for it,
up to ``wait_s``, instead of failing at the first refused connection: the database blinks,
the run goes on. Only a run's own writes wait (those made while `run_id_var` names a run):
a request that writes state (`POST /threads/{id}/state`) gets its 503 at once. Both writes
are upserts keyed by the checkpoint (and task), so writing one again after a connection
died mid-way stores it once. Reads are not retried: they fail as soon as the pool gives
up, and whoever reads (a request, the settle) decides what to do. Past ``wait_s`` the write
raises `OutageOutlasted` (an unreachable-database error), and the run ends `error`.
History rewrites (rollback, copy, prune) come from `HistoryPostgresSaver` and do not wait.

Each write goes to PostgreSQL as one statement (``runtime/checkpoints/checkpoint_statements.py``): a
checkpoint with its new channel blobs, or all of a task's writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # pyright: ignore[reportPrivateUsage]
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from pronghorn.persistence.outage import OutageWaits, outlast_outage
from pronghorn.runtime.checkpoints.checkpoint_statements import OneStatementCursor, SaverStatements
from pronghorn.runtime.checkpoints.postgres_history import HistoryPostgresSaver
from pronghorn.runtime.checkpoints.small_values import small
from pronghorn.runtime.observability.log_context import run_id_var

_T = TypeVar("_T")


class OutlastingPostgresSaver(HistoryPostgresSaver):
    def __init__(
        self,
        pool: AsyncConnectionPool[AsyncConnection[DictRow]],
        *,
        wait_s: float,
        waits: OutageWaits,
    ) -> None:
        super().__init__(pool)
        self._pool = pool
        self._statements = SaverStatements(
            self.UPSERT_CHECKPOINT_BLOBS_SQL,
            self.UPSERT_CHECKPOINTS_SQL,
            self.UPSERT_CHECKPOINT_WRITES_SQL,
            self.INSERT_CHECKPOINT_WRITES_SQL,
        )
        self.wait_s = wait_s
        self.waits = waits

    @asynccontextmanager
    # Any: the library's cursor, or a OneStatementCursor in its place (its writes' executemany)
    async def _cursor(self, *, pipeline: bool = False) -> AsyncGenerator[Any]:
        """The library's cursor; the one its writes use (``pipeline=True``: its
        ``adelete_thread`` now, ours go through ``_writing`` directly) sends them as one
        statement each."""
        if pipeline:
            async with self._writing() as grouped:
                yield grouped
            return
        async with super()._cursor(pipeline=False) as cur:
            yield cur

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:

        async def once() -> RunnableConfig:
            return await self._put(config, checkpoint, metadata, new_versions)

        if run_id_var.get() is None:
            return await once()
        return await outlast_outage(
            once, what="writing a checkpoint", within_s=self.wait_s, waits=self.waits
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, object]],
        task_id: str,
        task_path: str = "",
    ) -> None:

        async def once() -> None:
            await self._put_writes(config, writes, task_id, task_path)

        if run_id_var.get() is None:
            await once()
            return
        await outlast_outage(
            once, what="writing a checkpoint", within_s=self.wait_s, waits=self.waits
        )

    # -- the library's writes, small values serialized on the loop --------------------
    # As `AsyncPostgresSaver.aput` / `aput_writes` (langgraph-checkpoint-postgres 3.2; the
    # conformance suite and tests/persistence/test_checkpoint_statements.py compare them
    # with the stock saver), except that values `small` says are small are serialized
    # here instead of in a worker thread (runtime/checkpoints/small_values.py).

    @asynccontextmanager
    async def _writing(self) -> AsyncGenerator[OneStatementCursor]:
        """The cursor the writes use, grouping each write's statements: the library's
        `_cursor` without its two generator layers around the pool's connection (the
        saver's lock, a pooled connection, a binary cursor with dict rows, as the
        library's)."""
        async with (
            self.lock,
            self._pool.connection() as conn,
            conn.cursor(binary=True, row_factory=dict_row) as cur,
        ):
            grouped = OneStatementCursor(cur, self._statements, pipelined=self.supports_pipeline)
            yield grouped
            await grouped.finish()

    async def _serialized(self, dump: Callable[[], _T], values: Iterable[object]) -> _T:
        if small(values):
            return dump()
        return await asyncio.to_thread(dump)

    async def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = dict(config.get("configurable") or {})
        thread_id = configurable.pop("thread_id")
        checkpoint_ns = configurable.pop("checkpoint_ns")
        checkpoint_id = configurable.pop("checkpoint_id", None)
        copy = checkpoint.copy()
        copy["channel_values"] = copy["channel_values"].copy()
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        # Primitive values stay inline in the checkpoint row; the others are blobs.
        blob_values: dict[str, object] = {}
        for k, v in checkpoint["channel_values"].items():
            if isinstance(v, _DeltaSnapshot):
                blob_values[k] = copy["channel_values"].pop(k)
                copy["channel_values"][k] = True
            elif v is None or isinstance(v, (str, int, float, bool)):
                pass
            else:
                blob_values[k] = copy["channel_values"].pop(k)
        async with self._writing() as cur:
            if blob_versions := {k: v for k, v in new_versions.items() if k in blob_values}:
                rows = await self._serialized(
                    lambda: self._dump_blobs(thread_id, checkpoint_ns, blob_values, blob_versions),
                    [blob_values[k] for k in blob_versions],
                )
                await cur.executemany(self.UPSERT_CHECKPOINT_BLOBS_SQL, rows)
            await cur.execute(
                self.UPSERT_CHECKPOINTS_SQL,
                (
                    thread_id,
                    checkpoint_ns,
                    checkpoint["id"],
                    checkpoint_id,
                    Jsonb(copy),
                    Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
                ),
            )
        return next_config

    async def _put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, object]],
        task_id: str,
        task_path: str,
    ) -> None:
        query = (
            self.UPSERT_CHECKPOINT_WRITES_SQL
            if all(w[0] in WRITES_IDX_MAP for w in writes)
            else self.INSERT_CHECKPOINT_WRITES_SQL
        )
        configurable = config.get("configurable") or {}
        params = await self._serialized(
            lambda: self._dump_writes(
                configurable["thread_id"],
                configurable["checkpoint_ns"],
                configurable["checkpoint_id"],
                task_id,
                task_path,
                writes,
            ),
            [value for _, value in writes],
        )
        async with self._writing() as cur:
            await cur.executemany(query, params)
