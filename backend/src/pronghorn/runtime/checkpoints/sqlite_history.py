"""History rewrites on the tables of LangGraph's ``SqliteSaver`` (``checkpoints``, ``writes``).

The statements behind `WorkerSqliteSaver.adelete_for_runs`, `acopy_thread` and `aprune`
(``runtime/checkpoints/sqlite_checkpoint.py``), run on the saver's own connection on the SQLite
worker, inside one worker write unit each: a crash leaves the old history or the new one. Rows are
copied and deleted as stored (nothing is decoded), checkpoint ids are kept, and writes go
only with their checkpoint (a running graph may save a step's writes before its checkpoint).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from pronghorn.runtime.checkpoints import history_plan
from pronghorn.runtime.checkpoints.history_plan import Node, Plan

# The saver stores metadata as JSON bytes: read as text (a BLOB would be taken for JSONB).
_RUN_ID = "json_extract(CAST(metadata AS TEXT), '$.run_id')"

RUN_ID_INDEX = f"CREATE INDEX IF NOT EXISTS pronghorn_checkpoints_run_id ON checkpoints ({_RUN_ID})"
"""Finds a run's checkpoints without reading every row (and its checkpoint blob)."""

_CHECKPOINT_COLS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_WRITE_COLS = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
_KEY = "thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _nodes(conn: sqlite3.Connection, thread_id: str) -> list[Node]:
    rows = conn.execute(
        "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
        f"{_RUN_ID} FROM checkpoints WHERE thread_id = ?",
        (thread_id,),
    ).fetchall()
    return [Node(r[0], r[1], r[2], None if r[3] is None else str(r[3])) for r in rows]


def _apply(conn: sqlite3.Connection, thread_id: str, plan: Plan) -> None:
    keys = [(thread_id, ns, cid) for ns, cid in sorted(plan.gone)]
    conn.executemany(f"DELETE FROM writes WHERE {_KEY}", keys)
    conn.executemany(f"DELETE FROM checkpoints WHERE {_KEY}", keys)
    conn.executemany(
        f"UPDATE checkpoints SET parent_checkpoint_id = ? WHERE {_KEY}",
        [(parent, thread_id, ns, cid) for (ns, cid), parent in sorted(plan.reparent.items())],
    )


def delete_for_runs(conn: sqlite3.Connection, run_ids: Sequence[str]) -> int:
    """Drop the checkpoints (and their writes) of `run_ids` from every thread; the count."""
    marks = _marks(len(run_ids))
    threads = [
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT thread_id FROM checkpoints WHERE {_RUN_ID} IN ({marks})",
            list(run_ids),
        )
    ]
    removed = 0
    for thread_id in threads:
        plan = history_plan.without_runs(_nodes(conn, thread_id), frozenset(run_ids))
        _apply(conn, thread_id, plan)
        removed += len(plan.gone)
    return removed


def copy_thread(conn: sqlite3.Connection, src: str, dst: str) -> None:
    """Copy every checkpoint and pending write of `src` to `dst`."""
    conn.execute(
        f"INSERT INTO checkpoints (thread_id, {_CHECKPOINT_COLS}) "
        f"SELECT ?, {_CHECKPOINT_COLS} FROM checkpoints WHERE thread_id = ?",
        (dst, src),
    )
    conn.execute(
        f"INSERT INTO writes (thread_id, {_WRITE_COLS}) "
        f"SELECT ?, {_WRITE_COLS} FROM writes WHERE thread_id = ?",
        (dst, src),
    )


def delete_threads(conn: sqlite3.Connection, thread_ids: Sequence[str]) -> None:
    marks = _marks(len(thread_ids))
    conn.execute(f"DELETE FROM writes WHERE thread_id IN ({marks})", list(thread_ids))
    conn.execute(f"DELETE FROM checkpoints WHERE thread_id IN ({marks})", list(thread_ids))


def delta_threads(conn: sqlite3.Connection, thread_ids: Sequence[str]) -> list[str]:
    """The threads whose graph uses a `DeltaChannel` (it leaves its counters, or its marker,
    in the metadata): their latest value is rebuilt from older checkpoints."""
    meta = "CAST(metadata AS TEXT)"
    rows = conn.execute(
        f"SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id IN "
        f"({_marks(len(thread_ids))}) AND ("
        f"json_type({meta}, '$.counters_since_delta_snapshot') IS NOT NULL "
        f"OR json_type({meta}, '$.delta_writes_versioned') IS NOT NULL)",
        list(thread_ids),
    )
    return sorted(r[0] for r in rows)


def keep_latest(conn: sqlite3.Connection, thread_ids: Sequence[str]) -> int:
    """Prune each thread to its latest checkpoint per namespace; the count removed."""
    removed = 0
    for thread_id in thread_ids:
        plan = history_plan.keep_latest(_nodes(conn, thread_id))
        _apply(conn, thread_id, plan)
        removed += len(plan.gone)
    return removed
