"""The run queue's SQL on a real PostgreSQL (persistence/repos/run_claims.py): which run
a claim takes, that two concurrent claimers never take one run nor one thread's runs, the
fair queue, caps, leases and fencing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine

from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos import run_claims, run_units
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.tables import runs, threads
from runs.backends import PG_URL

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="the run queue needs PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL"
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def add_thread(eng: Engine) -> str:
    tid = uuid.uuid4().hex
    with eng.begin() as conn:
        conn.execute(insert(threads), threads_repo.new_thread_row(tid, status="busy"))
    return tid


def add_run(eng: Engine, tid: str, at: int, *, user: str = "u1", **fields: Any) -> str:
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
        owner_id=user,
        created_at=T0 + timedelta(seconds=at),
    )
    row.update(fields)
    with eng.begin() as conn:
        conn.execute(insert(runs), row)
    return rid


def claim(eng: Engine, owner: str = "A", **kw: Any) -> RunRecord | None:
    with eng.begin() as conn:
        return run_claims.claim_next(conn, owner=owner, lease_s=30, **kw)


def finish(eng: Engine, rid: str) -> None:
    with eng.begin() as conn:
        conn.execute(update(runs).where(runs.c.run_id == rid).values(status="success"))


def test_the_oldest_claimable_run_is_claimed_and_a_threads_runs_wait_their_turn(engine):
    t1, t2 = add_thread(engine), add_thread(engine)
    r1 = add_run(engine, t1, 1)
    r2 = add_run(engine, t1, 2)
    r3 = add_run(engine, t2, 3)
    first = claim(engine)
    assert first is not None and first.run_id == r1
    assert first.owner == "A" and first.fence == 1
    # r2 waits for r1 (same thread, still running): the other thread's run is next.
    second = claim(engine, "B")
    assert second is not None and second.run_id == r3
    assert claim(engine, "B") is None
    finish(engine, r1)
    third = claim(engine, "B")
    assert third is not None and third.run_id == r2


def test_a_run_is_not_claimable_before_it_is_due_nor_while_an_earlier_one_is_pending(engine):
    tid = add_thread(engine)
    later = datetime.now(UTC) + timedelta(hours=1)
    delayed = add_run(engine, tid, 1, claimable_at=later)
    add_run(engine, tid, 2)
    assert claim(engine) is None  # the earliest is not due; the next must not overtake it
    with engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.run_id == delayed).values(claimable_at=T0))
    got = claim(engine)
    assert got is not None and got.run_id == delayed


def test_two_concurrent_claimers_skip_each_others_locked_rows(engine):
    t1, t2 = add_thread(engine), add_thread(engine)
    r1 = add_run(engine, t1, 1)
    add_run(engine, t1, 2)
    r3 = add_run(engine, t2, 3)
    with engine.connect() as a, engine.connect() as b:
        ta = a.begin()
        got_a = run_claims.claim_next(a, owner="A", lease_s=30)
        assert got_a is not None and got_a.run_id == r1
        # A has not committed: B neither waits nor takes r1 (locked) nor r2 (its thread
        # is locked), it takes the other thread's run.
        tb = b.begin()
        got_b = run_claims.claim_next(b, owner="B", lease_s=30)
        assert got_b is not None and got_b.run_id == r3
        ta.commit()
        tb.commit()
    with engine.connect() as conn:
        owners = dict(conn.execute(select(runs.c.run_id, runs.c.owner)).all())
    assert owners[r1] == "A" and owners[r3] == "B"
    assert sum(1 for o in owners.values() if o is None) == 1


def test_the_fair_queue_prefers_users_with_fewer_running_runs(engine):
    t1, t2, t3 = add_thread(engine), add_thread(engine), add_thread(engine)
    add_run(engine, t1, 1, user="busy")
    older = add_run(engine, t2, 2, user="busy")
    newer = add_run(engine, t3, 3, user="idle")
    assert claim(engine).run_id != newer  # type: ignore[union-attr]  (busy's first)
    got = claim(engine)
    assert got is not None and got.run_id == newer  # idle has none running
    assert claim(engine).run_id == older  # type: ignore[union-attr]


def test_cluster_and_per_user_caps(engine):
    ids = [add_run(engine, add_thread(engine), i, user="u" if i < 3 else "v") for i in range(4)]
    caps = run_claims.Caps(total=3, per_user=2)
    got = [claim(engine, caps=caps) for _ in range(4)]
    claimed = [g.run_id for g in got if g is not None]
    assert len(claimed) == 3  # the cluster-wide cap
    assert ids[2] not in claimed  # u's third: over its cap of 2
    assert ids[3] in claimed


def test_excluded_threads_are_skipped(engine):
    t1, t2 = add_thread(engine), add_thread(engine)
    add_run(engine, t1, 1)
    r2 = add_run(engine, t2, 2)
    got = claim(engine, exclude_threads=[t1])
    assert got is not None and got.run_id == r2


def test_renew_keeps_only_leases_still_held_with_the_same_fence(engine):
    tid = add_thread(engine)
    rid = add_run(engine, tid, 1)
    got = claim(engine)
    assert got is not None
    with engine.begin() as conn:
        assert run_claims.renew(conn, owner="A", lease_s=30, held={rid: 1}) == {rid}
        assert run_claims.renew(conn, owner="A", lease_s=30, held={rid: 0}) == set()
        assert run_claims.renew(conn, owner="B", lease_s=30, held={rid: 1}) == set()


def _expire(eng: Engine, rid: str) -> None:
    with eng.begin() as conn:
        conn.execute(
            update(runs).where(runs.c.run_id == rid).values(lease_expires_at=T0, status="running")
        )


def test_an_expired_lease_is_requeued_with_a_new_fence_and_attempt(engine):
    tid = add_thread(engine)
    rid = add_run(engine, tid, 1)
    assert claim(engine) is not None
    with engine.begin() as conn:  # not expired yet: nothing to recover
        assert run_claims.recover_expired(conn, mode="resume", error={}) == []
    _expire(engine, rid)
    with engine.begin() as conn:
        found = run_claims.recover_expired(conn, mode="resume", error={})
    assert [(f.run_id, f.requeued) for f in found] == [(rid, True)]
    again = claim(engine, "B")
    assert again is not None and again.run_id == rid
    assert again.fence == 3 and again.attempt == 2  # claim, recovery, claim
    with engine.begin() as conn:  # the old claimant's renewal fails
        assert run_claims.renew(conn, owner="A", lease_s=30, held={rid: 1}) == set()


def test_an_expired_lease_in_error_mode_settles_the_run_and_frees_the_thread(engine):
    tid = add_thread(engine)
    rid = add_run(engine, tid, 1)
    assert claim(engine) is not None
    _expire(engine, rid)
    err = {"error": "LeaseExpired", "message": "gone"}
    with engine.begin() as conn:
        found = run_claims.recover_expired(conn, mode="error", error=err)
    assert [(f.run_id, f.requeued) for f in found] == [(rid, False)]
    with engine.connect() as conn:
        run = conn.execute(select(runs).where(runs.c.run_id == rid)).mappings().one()
        thread = conn.execute(select(threads).where(threads.c.thread_id == tid)).mappings().one()
    assert run["status"] == "error" and run["error"] == err and run["owner"] is None
    assert thread["status"] == "error"


def test_settling_with_a_stale_fence_is_refused_and_writes_nothing(engine):
    tid = add_thread(engine)
    rid = add_run(engine, tid, 1)
    got = claim(engine)
    assert got is not None
    _expire(engine, rid)
    with engine.begin() as conn:
        run_claims.recover_expired(conn, mode="resume", error={})

    def settle(conn: Any, fence: tuple[str, int]) -> None:
        run_units.settle_run(
            conn,
            run_id=rid,
            thread_id=tid,
            delete_run=False,
            run_fields={"status": "success", "usage": {}},
            thread_status="idle",
            thread_fields={"values": {"by": "A"}, "interrupts": {}, "error": None},
            others_pending=False,
            lock_rows=True,
            fence=fence,
        )

    with pytest.raises(run_units.Fenced), engine.begin() as conn:
        settle(conn, ("A", 1))
    with engine.connect() as conn:
        run = conn.execute(select(runs).where(runs.c.run_id == rid)).mappings().one()
        thread = conn.execute(select(threads).where(threads.c.thread_id == tid)).mappings().one()
    assert run["status"] == "pending" and thread["values"] is None
    again = claim(engine, "B")
    assert again is not None
    with engine.begin() as conn:
        settle(conn, ("B", again.fence))
    with engine.connect() as conn:
        assert conn.execute(select(runs.c.status).where(runs.c.run_id == rid)).scalar() == "success"


def test_a_queued_run_can_be_claimed_out_of_turn_to_cancel_it_once(engine):
    tid = add_thread(engine)
    add_run(engine, tid, 1)
    second = add_run(engine, tid, 2)
    with engine.begin() as conn:
        got = run_claims.claim_unclaimed(conn, second, owner="A", lease_s=30)
        assert got is not None and got.owner == "A"
        assert run_claims.claim_unclaimed(conn, second, owner="B", lease_s=30) is None


def test_a_sweeper_never_recovers_its_own_leases(engine):
    tid = add_thread(engine)
    rid = add_run(engine, tid, 1)
    assert claim(engine, "A") is not None
    _expire(engine, rid)
    with engine.begin() as conn:
        assert run_claims.recover_expired(conn, mode="resume", error={}, sweeper="A") == []
        found = run_claims.recover_expired(conn, mode="resume", error={}, sweeper="B")
    assert [f.run_id for f in found] == [rid]
