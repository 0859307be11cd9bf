"""The cluster queue's limits in SQL on a real PostgreSQL (persistence/repos/run_claims.py
and run_queue_load.py): queued runs that waited past `runs.max_queue_wait_s` end `error`
exactly once, and only while nobody claimed them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from cluster.test_claim_sql import T0, add_run, add_thread, claim
from pronghorn.persistence.repos import run_claims
from pronghorn.persistence.repos.run_queue_load import queue_load
from pronghorn.persistence.tables import runs, threads
from runs.backends import PG_URL

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="the run queue needs PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL"
)

ERROR = {"error": "QueueTimeout", "message": "waited too long"}


def expire(conn, max_wait_s: float = 5.0) -> list[str]:
    found = run_claims.expire_queued(conn, max_wait_s=max_wait_s, error=ERROR)
    return [r.run_id for r in found]


def status_of(eng: Engine, rid: str) -> tuple[str, dict | None, datetime | None]:
    with eng.connect() as conn:
        row = conn.execute(
            select(runs.c.status, runs.c.error, runs.c.started_at).where(runs.c.run_id == rid)
        ).one()
    return row[0], row[1], row[2]


def test_a_run_queued_past_the_limit_ends_error_without_starting_and_only_once(engine):
    tid = add_thread(engine)
    old = add_run(engine, tid, 1, updated_at=T0)
    fresh = add_run(engine, add_thread(engine), 2, updated_at=datetime.now(UTC))
    with engine.begin() as conn:
        assert expire(conn) == [old]
    assert status_of(engine, old) == ("error", ERROR, None)
    assert status_of(engine, fresh)[0] == "pending"
    with engine.connect() as conn:
        thread = select(threads.c.status).where(threads.c.thread_id == tid)
        assert conn.execute(thread).scalar_one() == "error"  # as on one process
    with engine.begin() as conn:
        assert expire(conn) == []  # settled: not expired again


def test_the_wait_counts_from_when_the_run_became_due(engine):
    due_soon = datetime.now(UTC) + timedelta(seconds=60)
    delayed = add_run(engine, add_thread(engine), 1, updated_at=T0, claimable_at=due_soon)
    due_long_ago = add_run(engine, add_thread(engine), 2, updated_at=T0, claimable_at=T0)
    with engine.begin() as conn:
        assert expire(conn) == [due_long_ago]
    assert status_of(engine, delayed)[0] == "pending"


def test_a_claimed_run_is_never_expired(engine):
    rid = add_run(engine, add_thread(engine), 1, updated_at=T0)
    got = claim(engine)
    assert got is not None and got.run_id == rid
    with engine.begin() as conn:
        assert expire(conn) == []
    assert status_of(engine, rid)[0] == "pending"


def test_two_sweepers_at_once_expire_a_run_once(engine):
    rid = add_run(engine, add_thread(engine), 1, updated_at=T0)
    with engine.connect() as a, engine.connect() as b:
        ta = a.begin()
        assert expire(a) == [rid]
        with b.begin():
            assert expire(b) == []  # locked by A: skipped, not waited for
        ta.commit()
        with b.begin():
            assert expire(b) == []  # settled by A


def test_accepts_counting_the_queue_wait_for_each_other(engine):
    """Two replicas accepting at once must not both see room for the last place: the count
    is taken under an advisory lock held until the accept commits."""
    add_run(engine, add_thread(engine), 1)
    add_run(engine, add_thread(engine), 2, user="u2")
    with engine.connect() as a, engine.connect() as b:
        ta = a.begin()
        load = queue_load(a, "u1", lock=True)
        assert (load.queued, load.user_queued, load.user_running) == (2, 1, 0)
        with pytest.raises(OperationalError, match="lock timeout"), b.begin():
            b.execute(text("SET LOCAL lock_timeout = '300ms'"))
            queue_load(b, "u1", lock=True)
        ta.commit()
        with b.begin():
            assert queue_load(b, "u1", lock=True).queued == 2
    claim(engine)
    with engine.connect() as conn:
        load = queue_load(conn, "u1", lock=False)
        assert (load.queued, load.user_queued, load.user_running) == (1, 0, 1)
