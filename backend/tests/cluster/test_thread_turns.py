"""A state update's turn on a thread, cluster-wide on a real PostgreSQL
(persistence/repos/threads.py `take_turn`): held by one update at a time, no run of the
thread is claimed while it holds, and it lapses on its own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, update
from sqlalchemy.engine import Engine

from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import run_claims
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.tables import runs, threads
from runs.backends import PG_URL

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="thread turns need PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL"
)


def add_thread(eng: Engine, status: str = "idle") -> str:
    tid = uuid.uuid4().hex
    with eng.begin() as conn:
        conn.execute(insert(threads), threads_repo.new_thread_row(tid, status=status))
    return tid


def add_run(eng: Engine, tid: str) -> str:
    rid = uuid.uuid4().hex
    row = runs_repo.new_run_row(
        run_id=rid,
        thread_id=tid,
        assistant_id="a",
        kwargs={},
        metadata={},
        multitask_strategy="enqueue",
        temporary=False,
        owner=None,
        owner_id="u1",
        created_at=datetime.now(UTC),
    )
    with eng.begin() as conn:
        conn.execute(insert(runs), row)
    return rid


def take(eng: Engine, tid: str, hold_s: float = 300) -> tuple[str | None, bool]:
    with eng.begin() as conn:
        return threads_repo.take_turn(conn, tid, hold_s=hold_s)


def claim(eng: Engine) -> RunRecord | None:
    with eng.begin() as conn:
        return run_claims.claim_next(conn, owner="B", lease_s=30)


def test_one_update_at_a_time_holds_a_thread_and_no_run_is_claimed_meanwhile(engine: Engine):
    tid = add_thread(engine)
    assert take(engine, tid) == ("idle", False)
    assert take(engine, tid) == ("idle", True)  # another update, any replica: refused
    rid = add_run(engine, tid)  # accepted meanwhile: queued
    assert claim(engine) is None
    with engine.begin() as conn:
        conn.execute(threads_repo.end_turn_stmt(tid))
    claimed = claim(engine)
    assert claimed is not None and claimed.run_id == rid
    assert take(engine, uuid.uuid4().hex) == (None, False)  # unknown thread


def test_a_busy_thread_gives_no_turn_and_a_dead_replicas_turn_lapses(engine: Engine):
    busy = add_thread(engine, "busy")
    assert take(engine, busy) == ("busy", False)
    with engine.begin() as conn:
        row = conn.execute(threads.select().where(threads.c.thread_id == busy)).mappings().one()
    assert row["turn_until"] is None
    tid = add_thread(engine)
    assert take(engine, tid) == ("idle", False)
    rid = add_run(engine, tid)
    with engine.begin() as conn:  # the holder died: its turn runs out
        conn.execute(
            update(threads)
            .where(threads.c.thread_id == tid)
            .values(turn_until=datetime.now(UTC) - timedelta(seconds=1))
        )
    claimed = claim(engine)
    assert claimed is not None and claimed.run_id == rid
