"""The PostgreSQL saver's writes, each sent as one statement.

LangGraph's ``AsyncPostgresSaver`` writes a checkpoint as one ``INSERT`` per new channel blob
plus one for the checkpoint row, and a task's writes as one ``INSERT`` per write, all in one
pipeline (one implicit transaction). ``OneStatementCursor`` stands in for the saver's cursor
inside that pipeline: it takes the library's own statements and rows as they come and sends
them as a single statement — the blobs as a data-modifying ``WITH`` ahead of the checkpoint
row, a task's writes as one multi-row ``VALUES`` — with the same columns, the same values
(serialized by the library) and the same conflict rules, so every row the library would have
stored is stored, in one transaction as before. Rows that a multi-row upsert would touch twice
(two writes to one special channel in one call) keep what the row-by-row statements left:
the last one for ``DO UPDATE``, the first for ``DO NOTHING``. A statement it does not know is
sent as it is, after what it holds. One statement goes on its own (the connection is in
autocommit: its own transaction, with no pipeline to enter and sync); several go in one
pipeline, as the library sends them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import LiteralString, cast

from psycopg import AsyncCursor
from psycopg.rows import DictRow

Row = Sequence[object]
# Rows per statement: PostgreSQL takes at most 65,535 parameters (9 per write, 6 per blob);
# a task with more writes (a fan-out of thousands of Sends) takes one statement per page.
PAGE = 1000


@dataclass(frozen=True)
class SaverStatements:
    """The saver's own statements (class attributes of LangGraph's saver)."""

    UPSERT_CHECKPOINT_BLOBS_SQL: str
    UPSERT_CHECKPOINTS_SQL: str
    UPSERT_CHECKPOINT_WRITES_SQL: str
    INSERT_CHECKPOINT_WRITES_SQL: str


def _query(text: str) -> LiteralString:
    """Our statements are the library's own text and ``%s`` placeholders: no value is ever
    formatted into them."""
    return cast(LiteralString, text)


def _values(rows: Sequence[Row]) -> tuple[str, list[object]]:
    width = len(rows[0])
    one = "(" + ", ".join(["%s"] * width) + ")"
    params: list[object] = [value for row in rows for value in row]
    return ", ".join([one] * len(rows)), params


def _multi_row(sql: str, rows: Sequence[Row]) -> tuple[str, list[object]]:
    """The library's single-row ``INSERT … VALUES (%s, …)`` for all of `rows`."""
    head, sep, tail = sql.partition("VALUES")
    if not sep or "(" not in tail:
        raise ValueError("not a single-row INSERT … VALUES statement")
    tail = tail[tail.index(")") + 1 :]
    values, params = _values(rows)
    return f"{head}VALUES {values}{tail}", params


def _unique(
    rows: Sequence[Row], key: Callable[[Row], tuple[object, ...]], *, keep_last: bool
) -> list[Row]:
    """One row per conflict key: the one a row-by-row upsert would have left."""
    seen: dict[tuple[object, ...], Row] = {}
    for row in rows:
        k = key(row)
        if keep_last or k not in seen:
            seen[k] = row
    return list(seen.values())


def _blob_key(row: Row) -> tuple[object, ...]:
    """checkpoint_blobs rows: (thread_id, checkpoint_ns, channel, version, type, blob)."""
    return tuple(row[:4])


def _write_key(row: Row) -> tuple[object, ...]:
    """checkpoint_writes rows: (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path,
    idx, channel, type, blob); the conflict key leaves task_path out."""
    return (row[0], row[1], row[2], row[3], row[5])


@dataclass(frozen=True)
class _Queued:
    query: LiteralString
    params: Sequence[object] | None = None
    rows: Sequence[Row] | None = None  # an executemany's


class OneStatementCursor:
    """Takes the statements of one library write as they come and sends them in `finish`:
    one statement on its own (autocommit: its own transaction, one round trip, no pipeline
    to enter and sync), several in one pipeline (one implicit transaction, as the library
    sends them)."""

    def __init__(
        self, cursor: AsyncCursor[DictRow], sql: SaverStatements, *, pipelined: bool = True
    ) -> None:
        self._cursor = cursor
        self._sql = sql
        self._pipelined = pipelined  # libpq has pipeline mode (else: a transaction)
        self._blobs: list[Row] = []
        self._queued: list[_Queued] = []

    async def executemany(self, query: str, params_seq: Sequence[Row]) -> None:
        rows = list(params_seq)
        if query == self._sql.UPSERT_CHECKPOINT_BLOBS_SQL:
            self._blobs.extend(rows)
            return
        self._queue_blobs()
        if not rows:
            return
        upsert = query == self._sql.UPSERT_CHECKPOINT_WRITES_SQL
        if upsert or query == self._sql.INSERT_CHECKPOINT_WRITES_SQL:
            unique = _unique(rows, _write_key, keep_last=upsert)
            for start in range(0, len(unique), PAGE):
                statement, params = _multi_row(query, unique[start : start + PAGE])
                self._queued.append(_Queued(_query(statement), params))
            return
        self._queued.append(_Queued(_query(query), rows=rows))

    async def execute(self, query: str, params: Row | None = None) -> None:
        if query == self._sql.UPSERT_CHECKPOINTS_SQL and self._blobs and params is not None:
            blobs = _unique(self._blobs, _blob_key, keep_last=False)
            self._blobs = []
            while len(blobs) > PAGE:  # pages before the last go first, in this transaction
                statement, page_params = _multi_row(
                    self._sql.UPSERT_CHECKPOINT_BLOBS_SQL, blobs[:PAGE]
                )
                self._queued.append(_Queued(_query(statement), page_params))
                blobs = blobs[PAGE:]
            insert_blobs, blob_params = _multi_row(
                self._sql.UPSERT_CHECKPOINT_BLOBS_SQL.strip().rstrip(";"), blobs
            )
            statement = f"WITH blobs AS ({insert_blobs}) {query}"
            self._queued.append(_Queued(_query(statement), [*blob_params, *params]))
            return
        self._queue_blobs()
        self._queued.append(_Queued(_query(query), params))

    async def finish(self) -> None:
        """Sends what it holds (blobs without a checkpoint row after them too: none today)."""
        self._queue_blobs()
        queued, self._queued = self._queued, []
        if len(queued) == 1 and queued[0].rows is None:
            await self._cursor.execute(queued[0].query, queued[0].params)
            return
        if not queued:
            return
        conn = self._cursor.connection
        async with conn.pipeline() if self._pipelined else conn.transaction():
            for q in queued:
                if q.rows is not None:
                    await self._cursor.executemany(q.query, q.rows)
                else:
                    await self._cursor.execute(q.query, q.params)

    def _queue_blobs(self) -> None:
        if self._blobs:
            rows, self._blobs = self._blobs, []
            self._queued.append(_Queued(_query(self._sql.UPSERT_CHECKPOINT_BLOBS_SQL), rows=rows))
