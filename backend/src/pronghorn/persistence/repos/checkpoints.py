"""Thread-level rewrites of the LangGraph savers' own tables, each as one transaction.

The SQLite saver (`checkpoints`, `writes`) and the PostgreSQL saver (`checkpoints`,
`checkpoint_blobs`, `checkpoint_writes`) implement neither `acopy_thread` nor
`adelete_for_runs` (and SQLite no `aprune`), and rebuilding a thread through `aput` is a
commit per checkpoint — a crash in the middle would leave part of a history. These units
run inside `Database.run` on the same database as the saver, so a crash leaves the old
history or the new one. Rows are copied and deleted as stored (no decoding), checkpoint ids
are kept, and a kept checkpoint whose parent goes is re-pointed at its nearest kept
ancestor. Writes are deleted only with their checkpoint (a running graph may save a step's
writes before its checkpoint).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from sqlalchemy import text
from sqlalchemy.engine import Connection

Saver = Literal["sqlite", "postgres"]

_RUN_ID = {
    "sqlite": "json_extract(CAST(metadata AS TEXT), '$.run_id')",
    "postgres": "metadata ->> 'run_id'",
}
_WRITES = {"sqlite": "writes", "postgres": "checkpoint_writes"}
_WRITE_COLS = {
    "sqlite": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value",
    "postgres": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
}
_CKPT_COLS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"

# (namespace, checkpoint id) -> (parent id, run id)
_Graph = dict[tuple[str, str], tuple[str | None, str | None]]


def _snapshot(conn: Connection, saver: Saver) -> None:
    """PostgreSQL: every statement of the unit reads one snapshot (SQLite has one writer)."""
    if saver == "postgres":
        conn.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))


def _graph(conn: Connection, saver: Saver, thread_id: str) -> _Graph:
    rows = conn.execute(
        text(
            f"SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, {_RUN_ID[saver]} "
            "FROM checkpoints WHERE thread_id = :t"
        ),
        {"t": thread_id},
    )
    return {(r[0], r[1]): (r[2], r[3]) for r in rows}


def copy_thread(conn: Connection, saver: Saver, src: str, dst: str) -> int:
    """Copy every checkpoint, blob and pending write of `src` to `dst`; the count copied."""
    _snapshot(conn, saver)
    copied = conn.execute(
        text(
            f"INSERT INTO checkpoints (thread_id, {_CKPT_COLS}) "
            f"SELECT :dst, {_CKPT_COLS} FROM checkpoints WHERE thread_id = :src"
        ),
        {"src": src, "dst": dst},
    ).rowcount
    if saver == "postgres":
        cols = "checkpoint_ns, channel, version, type, blob"
        conn.execute(
            text(
                f"INSERT INTO checkpoint_blobs (thread_id, {cols}) "
                f"SELECT :dst, {cols} FROM checkpoint_blobs WHERE thread_id = :src"
            ),
            {"src": src, "dst": dst},
        )
    cols = _WRITE_COLS[saver]
    conn.execute(
        text(
            f"INSERT INTO {_WRITES[saver]} (thread_id, {cols}) "
            f"SELECT :dst, {cols} FROM {_WRITES[saver]} WHERE thread_id = :src"
        ),
        {"src": src, "dst": dst},
    )
    return int(copied or 0)


def _remove(
    conn: Connection,
    saver: Saver,
    thread_id: str,
    gone: set[tuple[str, str]],
    parent_of: dict[tuple[str, str], str | None],
) -> None:
    """Delete the `gone` checkpoints with their writes (and blobs nothing else uses), and
    set the parents in `parent_of`."""
    keys = [{"t": thread_id, "ns": ns, "id": cid} for ns, cid in sorted(gone)]
    freed: set[tuple[str, str, str]] = set()  # (namespace, channel, version) of blobs
    if saver == "postgres":
        rows = conn.execute(
            text(
                "SELECT checkpoint_ns, checkpoint_id, v.key, v.value FROM checkpoints "
                "CROSS JOIN LATERAL jsonb_each_text(checkpoint -> 'channel_versions') AS v "
                "WHERE thread_id = :t AND checkpoint_id = ANY(:ids)"
            ),
            {"t": thread_id, "ids": sorted({cid for _, cid in gone})},
        ).all()
        freed = {(r[0], r[2], r[3]) for r in rows if (r[0], r[1]) in gone}
    where = "thread_id = :t AND checkpoint_ns = :ns AND checkpoint_id = :id"
    conn.execute(text(f"DELETE FROM {_WRITES[saver]} WHERE {where}"), keys)
    conn.execute(text(f"DELETE FROM checkpoints WHERE {where}"), keys)
    updates = [
        {"t": thread_id, "ns": ns, "id": cid, "p": parent}
        for (ns, cid), parent in parent_of.items()
    ]
    if updates:
        conn.execute(
            text(f"UPDATE checkpoints SET parent_checkpoint_id = :p WHERE {where}"), updates
        )
    if freed:
        used = conn.execute(
            text(
                "SELECT DISTINCT checkpoint_ns, v.key, v.value FROM checkpoints "
                "CROSS JOIN LATERAL jsonb_each_text(checkpoint -> 'channel_versions') AS v "
                "WHERE thread_id = :t"
            ),
            {"t": thread_id},
        ).all()
        garbage = freed - {(r[0], r[1], r[2]) for r in used}
        if garbage:
            conn.execute(
                text(
                    "DELETE FROM checkpoint_blobs WHERE thread_id = :t AND checkpoint_ns = :ns "
                    "AND channel = :c AND version = :v"
                ),
                [{"t": thread_id, "ns": ns, "c": c, "v": v} for ns, c, v in sorted(garbage)],
            )


def delete_for_run(conn: Connection, saver: Saver, thread_id: str, run_id: str) -> int:
    """Drop the checkpoints one run wrote (metadata.run_id); the count removed."""
    _snapshot(conn, saver)
    graph = _graph(conn, saver, thread_id)
    gone = {key for key, (_, rid) in graph.items() if rid == run_id}
    if not gone:
        return 0
    parent_of: dict[tuple[str, str], str | None] = {}
    for (ns, cid), (parent, _) in graph.items():
        if (ns, cid) in gone or parent is None or (ns, parent) not in gone:
            continue
        seen: set[str] = set()
        while parent is not None and (ns, parent) in gone and parent not in seen:
            seen.add(parent)
            parent = graph[(ns, parent)][0]
        parent_of[(ns, cid)] = parent
    _remove(conn, saver, thread_id, gone, parent_of)
    return len(gone)


def keep_latest(conn: Connection, saver: Saver, thread_id: str) -> int:
    """Prune a thread to its latest checkpoint per namespace; the count removed."""
    _snapshot(conn, saver)
    graph = _graph(conn, saver, thread_id)
    latest: dict[str, str] = {}
    by_ns: dict[str, list[str]] = defaultdict(list)
    for ns, cid in graph:
        by_ns[ns].append(cid)
    for ns, ids in by_ns.items():
        latest[ns] = max(ids)  # ids sort in time order (the savers order by them too)
    gone = {(ns, cid) for ns, cid in graph if latest[ns] != cid}
    if not gone:
        return 0
    parent_of: dict[tuple[str, str], str | None] = {
        (ns, cid): None for ns, cid in latest.items() if graph[(ns, cid)][0] is not None
    }
    _remove(conn, saver, thread_id, gone, parent_of)
    return len(gone)
