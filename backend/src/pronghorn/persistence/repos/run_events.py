"""The `run_events` table: every event of every run, appended as the run goes.

Synchronous units over SQLAlchemy Core for `Database.write` (one hop on SQLite, `run_sync` on
PostgreSQL). Rows go in batches: on SQLite one INSERT with many parameter sets per flush; on
PostgreSQL one multi-row INSERT per `PG_PAGE` rows. That is one protocol message the client
hands over whole, where an executemany streams a Bind/Execute per row: a replica frozen
half-way through one (SIGSTOP, a stalled VM) kept its session "active", waiting for the
rest with its fence rows locked `FOR SHARE`, out of reach of
`idle_in_transaction_session_timeout`, and no other replica could recover its runs.

Scale-out, rows are fenced: the statement that inserts them first locks the runs' rows
`FOR SHARE` and keeps only the rows published under a run's current fence
(`append_fenced`, runtime/events/event_store.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import BindParameter, bindparam, func, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import run_events, runs

# (run_id, seq, event name, data)
EventRow = tuple[str, int, str, bytes]

_VALUES: dict[str, BindParameter[object]] = {
    "run_id": bindparam("b_run_id"),
    "seq": bindparam("b_seq"),
    "event": bindparam("b_event"),
    "data": bindparam("b_data"),
    "created_at": bindparam("b_ts"),
}
# A row already stored (a batch retried after a commit its writer did not see) is skipped.
_SQLITE_APPEND = sqlite.insert(run_events).values(_VALUES).on_conflict_do_nothing()
PG_PAGE = 1000  # rows per PostgreSQL INSERT: 5 parameters each, far below its 65535


def append(conn: Connection, rows: Sequence[EventRow]) -> None:
    """Insert a batch of events (any runs)."""
    if not rows:
        return
    ts = now()
    if conn.dialect.name == "postgresql":
        for start in range(0, len(rows), PG_PAGE):
            values = [
                {"run_id": r, "seq": s, "event": e, "data": d, "created_at": ts}
                for r, s, e, d in rows[start : start + PG_PAGE]
            ]
            conn.execute(postgresql.insert(run_events).values(values).on_conflict_do_nothing())
        return
    conn.execute(
        _SQLITE_APPEND,
        [{"b_run_id": r, "b_seq": s, "b_event": e, "b_data": d, "b_ts": ts} for r, s, e, d in rows],
    )


# A fenced batch (PostgreSQL, scale-out) in one statement: the batch's runs' rows are
# locked `FOR SHARE` in id order (two such statements never deadlock) and only the rows
# published under their run's current fence, or under none, are inserted. The rows travel
# as five arrays, so the statement's text (and its prepared form) is the same for any size.
_APPEND_FENCED = text(
    """
    WITH fences AS MATERIALIZED (
        SELECT run_id, fence FROM runs
        WHERE run_id = ANY(CAST(:run_ids AS varchar[]))
        ORDER BY run_id
        FOR SHARE
    )
    INSERT INTO run_events (run_id, seq, event, data, created_at)
    SELECT v.run_id, v.seq, v.event, v.data, :ts
    FROM unnest(
        CAST(:rows_run AS varchar[]), CAST(:rows_seq AS integer[]),
        CAST(:rows_event AS varchar[]), CAST(:rows_data AS bytea[]),
        CAST(:rows_fence AS integer[])
    ) AS v(run_id, seq, event, data, fence)
    JOIN fences f ON f.run_id = v.run_id AND (v.fence IS NULL OR v.fence = f.fence)
    ON CONFLICT DO NOTHING
    RETURNING run_id, seq
    """
).bindparams(bindparam("ts", type_=run_events.c.created_at.type))

# (run_id, seq, event name, data, fence or None)
FencedRow = tuple[str, int, str, bytes, int | None]


def append_fenced(conn: Connection, rows: Sequence[FencedRow]) -> set[tuple[str, int]]:
    """PostgreSQL: insert the rows whose fence is their run's current one (or None), with
    the fences checked and locked in the same statement (see `lock_fences`); the (run id,
    seq) of the rows inserted (a row already stored is skipped, as by `append`)."""
    if not rows:
        return set()
    params = {
        "run_ids": sorted({r[0] for r in rows}),
        "rows_run": [r[0] for r in rows],
        "rows_seq": [r[1] for r in rows],
        "rows_event": [r[2] for r in rows],
        "rows_data": [r[3] for r in rows],
        "rows_fence": [r[4] for r in rows],
        "ts": now(),
    }
    return {(str(run_id), int(seq)) for run_id, seq in conn.execute(_APPEND_FENCED, params)}


def existing_runs(conn: Connection, run_ids: Sequence[str]) -> set[str]:
    """Which of these runs still have a row (a deleted run's events have nowhere to go)."""
    if not run_ids:
        return set()
    found = conn.execute(select(runs.c.run_id).where(runs.c.run_id.in_(list(run_ids))))
    return {r[0] for r in found}


def lock_fences(conn: Connection, run_ids: Sequence[str]) -> dict[str, int]:
    """The current fence of each of these runs that still has a row, the rows locked
    (`FOR SHARE`) until the transaction ends: no claim or recovery, which moves a fence,
    commits meanwhile, and each waits for this transaction to commit first. Rows are
    locked in id order (two such transactions never deadlock)."""
    if not run_ids:
        return {}
    found = conn.execute(
        select(runs.c.run_id, runs.c.fence)
        .where(runs.c.run_id.in_(sorted(run_ids)))
        .order_by(runs.c.run_id)
        .with_for_update(read=True)
    )
    return {r[0]: int(r[1]) for r in found}


def read(conn: Connection, run_id: str, after: int, limit: int) -> list[tuple[int, str, bytes]]:
    """Up to `limit` stored events of a run with seq > after, in order."""
    rows = conn.execute(
        select(run_events.c.seq, run_events.c.event, run_events.c.data)
        .where(run_events.c.run_id == run_id, run_events.c.seq > after)
        .order_by(run_events.c.seq)
        .limit(limit)
    )
    return [(r[0], r[1], bytes(r[2])) for r in rows]


def last_seq(conn: Connection, run_id: str) -> int:
    """The highest stored event id of a run (0 if none)."""
    value = conn.execute(
        select(func.max(run_events.c.seq)).where(run_events.c.run_id == run_id)
    ).scalar()
    return int(value or 0)
