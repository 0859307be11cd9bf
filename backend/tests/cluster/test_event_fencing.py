"""Fenced event appends on a real PostgreSQL (runtime/events/event_store.py): events a replica
buffered under a claim it has since lost are refused, without losing the new owner's events
or other runs' events of the same batch; the check holds back a takeover until the insert
commits; the Redis broker stores a run's events under the claim it was opened with."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import create_engine, event, select, text, update
from sqlalchemy.exc import DBAPIError, OperationalError

from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.outage import is_database_unreachable
from pronghorn.persistence.repos import run_claims
from pronghorn.persistence.repos import run_events as events_repo
from pronghorn.persistence.tables import run_events, runs
from pronghorn.runtime.events.broker import Event, EventRow
from pronghorn.runtime.events.event_store import SqlEventStore
from runs.backends import PG_URL, database
from support.redis_kit import redis_broker
from support.run_rows import new_run

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="fenced event appends need PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL"
)


@pytest.fixture
async def pg(tmp_path: Path) -> AsyncIterator[tuple[Database, str]]:
    with database("postgres", tmp_path) as (cfg, sync_url):
        db = Database(cfg["url"])
        await db.connect()
        await upgrade(db)
        try:
            yield db, sync_url
        finally:
            await db.close()


async def queued_run(db: Database) -> str:
    """A busy thread with one queued (unclaimed) run; the run's id."""
    return (await new_run(db, thread_status="busy", owner_id="u1"))[1]


async def claim(db: Database, run_id: str, owner: str) -> int:
    row = await db.write(lambda c: run_claims.claim_unclaimed(c, run_id, owner=owner, lease_s=30))
    assert row is not None
    return row.fence


async def take_over(db: Database, run_id: str, new_owner: str) -> int:
    """The run's lease expires and another replica's sweeper requeues it; the new owner
    claims it: its fence."""

    def expire(conn) -> None:
        conn.execute(
            update(runs)
            .where(runs.c.run_id == run_id)
            .values(lease_expires_at=text("now() - interval '1 second'"))
        )

    await db.write(expire)
    found = await db.write(
        lambda c: run_claims.recover_expired(c, mode="resume", error={}, sweeper=new_owner)
    )
    assert [r.run_id for r in found] == [run_id]
    return await claim(db, run_id, new_owner)


def rows(run_id: str, ids: range, who: str, fence: int | None) -> list[EventRow]:
    return [(run_id, Event(i, "values", b'{"by":"%s"}' % who.encode()), fence) for i in ids]


async def stored(db: Database, run_id: str) -> list[tuple[int, bytes]]:
    got = await SqlEventStore(db).read(run_id, 0, 1000)
    return [(ev.id, ev.data) for ev in got]


async def test_events_buffered_under_a_lost_claim_are_refused_and_nothing_else_is_lost(pg):
    db, _ = pg
    store = SqlEventStore(db)
    frozen, other = await queued_run(db), await queued_run(db)
    fence_a = await claim(db, frozen, "A")
    other_fence = await claim(db, other, "A")
    await store.append(rows(frozen, range(1, 3), "A", fence_a))
    # A freezes with events 3..5 buffered; B takes the run over and goes on after id 2.
    buffered = rows(frozen, range(3, 6), "A", fence_a)
    fence_b = await take_over(db, frozen, "B")
    assert fence_b > fence_a
    assert await store.last_id(frozen) == 2
    await store.append(rows(frozen, range(3, 5), "B", fence_b))
    # A wakes and flushes: one batch with the lost run's events and another run's.
    await store.append([*buffered, *rows(other, range(1, 4), "A", other_fence)])
    assert await stored(db, frozen) == [
        (1, b'{"by":"A"}'),
        (2, b'{"by":"A"}'),
        (3, b'{"by":"B"}'),
        (4, b'{"by":"B"}'),
    ]  # A's event 5 (no clash with B's ids) is not kept either
    assert [i for i, _ in await stored(db, other)] == [1, 2, 3]


async def test_a_fenced_batch_skips_runs_deleted_meanwhile_and_keeps_unfenced_rows(pg):
    db, _ = pg
    store = SqlEventStore(db)
    kept, gone, closed = await queued_run(db), await queued_run(db), await queued_run(db)
    fence = await claim(db, kept, "A")
    gone_fence = await claim(db, gone, "A")

    def delete_run(conn) -> None:
        conn.execute(runs.delete().where(runs.c.run_id == gone))

    await db.write(delete_run)
    # An unfenced row (a sweeper closing a run's log) rides in the same batch.
    await store.append(
        [
            *rows(kept, range(1, 3), "A", fence),
            *rows(gone, range(1, 3), "A", gone_fence),
            *rows(closed, range(1, 2), "sweeper", None),
        ]
    )
    assert [i for i, _ in await stored(db, kept)] == [1, 2]
    assert await stored(db, gone) == []
    assert await stored(db, closed) == [(1, b'{"by":"sweeper"}')]


async def test_a_takeover_waits_for_a_fenced_insert_under_way_to_commit(pg):
    """Were the fence only read (not locked), a takeover could commit between the check and
    the insert's commit, the new owner would not see those ids and its own would clash."""
    db, sync_url = pg
    rid = await queued_run(db)
    fence = await claim(db, rid, "A")
    eng = create_engine(sync_url)
    try:
        with eng.connect() as writer, eng.connect() as sweeper:
            tx = writer.begin()
            assert events_repo.lock_fences(writer, [rid]) == {rid: fence}
            events_repo.append(writer, [(rid, 1, "values", b"{}")])
            with pytest.raises(OperationalError, match="lock timeout"), sweeper.begin():
                sweeper.execute(text("SET LOCAL lock_timeout = '300ms'"))
                sweeper.execute(
                    update(runs).where(runs.c.run_id == rid).values(fence=runs.c.fence + 1)
                )
            tx.commit()
            with sweeper.begin():  # once the insert committed, the fence moves on
                sweeper.execute(
                    update(runs).where(runs.c.run_id == rid).values(fence=runs.c.fence + 1)
                )
            seqs = writer.execute(select(run_events.c.seq).where(run_events.c.run_id == rid))
            assert [s for (s,) in seqs] == [1]
    finally:
        eng.dispose()


async def test_a_replica_frozen_inside_a_transaction_does_not_stall_lease_recovery(pg):
    """A replica SIGSTOPped between an event batch's `FOR SHARE` and its commit holds the
    run row: the other replicas' sweepers skip locked rows, so without a server-side limit
    the run would wait for the frozen one to wake. `database.idle_in_transaction_timeout_s`
    makes PostgreSQL end that session, and the run is recovered."""
    db, _ = pg
    rid = await queued_run(db)
    await claim(db, rid, "A")
    await db.write(
        lambda c: c.execute(
            update(runs)
            .where(runs.c.run_id == rid)
            .values(lease_expires_at=text("now() - interval '1 second'"))
        )
    )

    async def sweep() -> list[str]:
        found = await db.write(
            lambda c: run_claims.recover_expired(c, mode="resume", error={}, sweeper="B")
        )
        return [r.run_id for r in found]

    frozen = Database(db.url, idle_in_transaction_timeout_s=0.5)
    await frozen.connect()
    try:
        with pytest.raises(DBAPIError) as ended:
            async with frozen.engine.begin() as conn:
                await conn.run_sync(lambda c: events_repo.lock_fences(c, [rid]))
                assert await sweep() == []  # the lock is held: the sweeper skips the run
                deadline = time.monotonic() + 30
                while not (found := await sweep()):  # until the server ends the session
                    assert time.monotonic() < deadline, "the frozen session kept its lock"
                    await asyncio.sleep(0.05)
                assert found == [rid]
                await conn.execute(text("SELECT 1"))  # it wakes: its session is gone
        # What the woken replica sees counts as "database unreachable": retried, then fenced.
        assert is_database_unreachable(ended.value)
    finally:
        await frozen.close()


async def test_a_batch_reaches_the_server_whole_not_row_by_row(pg):
    """A batch is one multi-row INSERT per page, never an executemany: an executemany
    streams a Bind/Execute per row, and a replica frozen half-way left its session
    "active" (waiting for the rest, beyond idle_in_transaction_session_timeout) with the
    run rows locked, so no other replica could recover its runs."""
    db, _ = pg
    rid = await queued_run(db)
    sent: list[tuple[bool, int]] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("INSERT INTO RUN_EVENTS"):
            sent.append((executemany, statement.count("$")))

    sync_engine = db.engine.sync_engine
    event.listen(sync_engine, "before_cursor_execute", record)
    try:
        rows = [(rid, seq, "values", b"{}") for seq in range(1, events_repo.PG_PAGE + 501)]
        await db.write(lambda c: events_repo.append(c, rows))
        await db.write(lambda c: events_repo.append(c, rows[:10]))  # stored already: skipped
    finally:
        event.remove(sync_engine, "before_cursor_execute", record)
    assert [many for many, _ in sent] == [False, False, False]
    assert [params for _, params in sent] == [5 * events_repo.PG_PAGE, 5 * 500, 5 * 10]
    stored = await db.write(lambda c: events_repo.read(c, rid, 0, 10_000))
    assert [e[0] for e in stored] == list(range(1, events_repo.PG_PAGE + 501))


async def test_the_redis_broker_stores_a_runs_events_under_the_claim_it_opened_it_with(pg):
    db, _ = pg
    store = SqlEventStore(db)
    rid = await queued_run(db)
    fence_a = await claim(db, rid, "A")
    async with redis_broker(
        store, SimpleNamespace(run_bytes=1 << 16, total_bytes=1 << 16)
    ) as broker:
        await broker.open_run(rid, "t", fence=fence_a)
        await broker.publish(rid, "values", b'{"by":"A"}')
        await broker.flush(rid)
        await take_over(db, rid, "B")
        await broker.publish(rid, "values", b'{"by":"A"}')  # buffered past the takeover
        await broker.flush(rid)
    assert await stored(db, rid) == [(1, b'{"by":"A"}')]
