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

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg_pool import AsyncConnectionPool

from pronghorn.persistence.outage import OutageWaits, outlast_outage
from pronghorn.runtime.checkpoints.checkpoint_statements import OneStatementCursor, SaverStatements
from pronghorn.runtime.checkpoints.postgres_history import HistoryPostgresSaver
from pronghorn.runtime.observability.log_context import run_id_var


class OutlastingPostgresSaver(HistoryPostgresSaver):
    def __init__(
        self,
        pool: AsyncConnectionPool[AsyncConnection[DictRow]],
        *,
        wait_s: float,
        waits: OutageWaits,
    ) -> None:
        super().__init__(pool)
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
        """The library's cursor; the one its writes use (``pipeline=True``) sends them as one
        statement each."""
        async with super()._cursor(pipeline=pipeline) as cur:
            if not pipeline:
                yield cur
                return
            grouped = OneStatementCursor(cur, self._statements)
            yield grouped
            await grouped.finish()

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        parent = super()

        async def once() -> RunnableConfig:
            return await parent.aput(config, checkpoint, metadata, new_versions)

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
        parent = super()

        async def once() -> None:
            await parent.aput_writes(config, writes, task_id, task_path)

        if run_id_var.get() is None:
            await once()
            return
        await outlast_outage(
            once, what="writing a checkpoint", within_s=self.wait_s, waits=self.waits
        )
