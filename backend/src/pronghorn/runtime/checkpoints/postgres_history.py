"""LangGraph's PostgreSQL saver with the history rewrites it lacks: `adelete_for_runs` and
`acopy_thread` (its own `aprune` is used as it is).

Each rewrite is one transaction on one snapshot of the thread (REPEATABLE READ; tried again
if a concurrent writer makes it fail), so a crash leaves the old history or the new one. Rows
are copied and deleted as stored (nothing is decoded), checkpoint ids are kept, writes go
only with their checkpoint, and the blobs that no kept checkpoint of the thread references
any more go too. `setup` adds an index on the metadata's `run_id`, so a rollback finds a
run's checkpoints without reading the whole table.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import LiteralString

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection, AsyncCursor
from psycopg.errors import DeadlockDetected, DuplicateTable, SerializationFailure, UniqueViolation
from psycopg.rows import DictRow, TupleRow, tuple_row
from psycopg_pool import AsyncConnectionPool

from pronghorn.runtime.checkpoints import history_plan
from pronghorn.runtime.checkpoints.history_plan import Key, Node, Plan

Cursor = AsyncCursor[TupleRow]

RUN_ID_INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS pronghorn_checkpoints_run_id_idx "
    "ON checkpoints ((metadata ->> 'run_id'))"
)

_CHECKPOINT_COLS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_BLOB_COLS = "checkpoint_ns, channel, version, type, blob"
_WRITE_COLS = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob"
_COPY: tuple[LiteralString, ...] = (
    f"INSERT INTO checkpoints (thread_id, {_CHECKPOINT_COLS}) "
    f"SELECT %s, {_CHECKPOINT_COLS} FROM checkpoints WHERE thread_id = %s",
    f"INSERT INTO checkpoint_blobs (thread_id, {_BLOB_COLS}) "
    f"SELECT %s, {_BLOB_COLS} FROM checkpoint_blobs WHERE thread_id = %s",
    f"INSERT INTO checkpoint_writes (thread_id, {_WRITE_COLS}) "
    f"SELECT %s, {_WRITE_COLS} FROM checkpoint_writes WHERE thread_id = %s",
)
_KEY = "thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"
_VERSIONS = (
    "SELECT checkpoint_ns, checkpoint_id, v.key, v.value FROM checkpoints "
    "CROSS JOIN LATERAL jsonb_each_text(checkpoint -> 'channel_versions') AS v "
    "WHERE thread_id = %s"
)
_ATTEMPTS = 5


class HistoryPostgresSaver(AsyncPostgresSaver):
    async def setup(self) -> None:
        await super().setup()
        async with self._connection() as conn:
            # Two replicas starting at once may both create it: the later one's error is moot.
            with contextlib.suppress(DuplicateTable, UniqueViolation):
                await conn.execute(RUN_ID_INDEX)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints of these runs, with their writes, from every thread (one
        transaction). A kept checkpoint whose parent goes is re-pointed at its nearest kept
        ancestor, so the thread reads as if the runs had never been."""
        if isinstance(run_ids, str):
            raise TypeError("run_ids must be a sequence of run ids, not a str")
        ids = [str(r) for r in run_ids]
        if not ids:
            return

        async def unit(cur: Cursor) -> None:
            await cur.execute(
                "SELECT DISTINCT thread_id FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)",
                (ids,),
            )
            for (thread_id,) in await cur.fetchall():
                plan = history_plan.without_runs(await _nodes(cur, thread_id), frozenset(ids))
                await _apply(cur, str(thread_id), plan)

        await self._rewrite(unit)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and pending write of one thread to another, as stored
        (checkpoint ids kept), in one transaction."""
        params = (str(target_thread_id), str(source_thread_id))

        async def unit(cur: Cursor) -> None:
            for statement in _COPY:
                await cur.execute(statement, params)

        await self._rewrite(unit)

    @asynccontextmanager
    async def _connection(self) -> AsyncGenerator[AsyncConnection[DictRow], None]:
        if self.pipe is not None:
            raise NotImplementedError("history rewrites need a pool or a plain connection")
        conn = self.conn
        if isinstance(conn, AsyncConnectionPool):
            async with conn.connection() as pooled:
                yield pooled
        else:
            async with self.lock:  # one connection: one user at a time, as the saver does
                yield conn

    async def _rewrite(self, unit: Callable[[Cursor], Awaitable[None]]) -> None:
        """`unit` in one REPEATABLE READ transaction, run again (a few times, with backoff)
        when a concurrent transaction makes it fail."""
        delay = 0.02
        for attempt in range(_ATTEMPTS):
            try:
                async with (
                    self._connection() as conn,
                    conn.transaction(),
                    conn.cursor(row_factory=tuple_row) as cur,
                ):
                    await cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    await unit(cur)
                return
            except (SerializationFailure, DeadlockDetected):
                if attempt == _ATTEMPTS - 1:
                    raise
                await asyncio.sleep(delay + random.uniform(0, delay))
                delay *= 2


async def _nodes(cur: Cursor, thread_id: str) -> list[Node]:
    await cur.execute(
        "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata ->> 'run_id' "
        "FROM checkpoints WHERE thread_id = %s",
        (thread_id,),
    )
    return [Node(r[0], r[1], r[2], r[3]) for r in await cur.fetchall()]


async def _versions(cur: Cursor, thread_id: str) -> set[tuple[Key, str, str]]:
    """(checkpoint, channel, version) of every blob the thread's checkpoints reference."""
    await cur.execute(_VERSIONS, (thread_id,))
    return {((r[0], r[1]), r[2], r[3]) for r in await cur.fetchall()}


async def _apply(cur: Cursor, thread_id: str, plan: Plan) -> None:
    if not plan:
        return
    before = await _versions(cur, thread_id)
    keys = [(thread_id, ns, cid) for ns, cid in sorted(plan.gone)]
    await cur.executemany(f"DELETE FROM checkpoint_writes WHERE {_KEY}", keys)
    await cur.executemany(f"DELETE FROM checkpoints WHERE {_KEY}", keys)
    if plan.reparent:
        await cur.executemany(
            f"UPDATE checkpoints SET parent_checkpoint_id = %s WHERE {_KEY}",
            [(p, thread_id, ns, cid) for (ns, cid), p in sorted(plan.reparent.items())],
        )
    freed = {(key[0], channel, version) for key, channel, version in before if key in plan.gone}
    used = {(key[0], channel, version) for key, channel, version in before if key not in plan.gone}
    if garbage := sorted(freed - used):
        await cur.executemany(
            "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND channel = %s AND version = %s",
            [(thread_id, ns, channel, version) for ns, channel, version in garbage],
        )
