"""A frozen replica's transactions on a real PostgreSQL: every gateway session is bounded
server-side and named for its replica; migrations run unbounded; a session frozen half-way
through a statement (beyond every server timeout) is ended by the lease sweeper once the
replica's lease lapsed, and the run recovered (persistence/repos/stale_sessions.py)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import func, text, update
from sqlalchemy.engine import Connection

from pronghorn.config.schema.app import StoreConfig
from pronghorn.persistence.db import Database
from pronghorn.persistence.migrate import upgrade
from pronghorn.persistence.repos import run_claims, stale_sessions
from pronghorn.persistence.tables import runs
from pronghorn.runtime.checkpoints.checkpoint import open_persistence
from runs.backends import PG_URL, database
from support.run_rows import new_run

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="session bounds need PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL"
)


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    with database("postgres", tmp_path) as (cfg, _):
        yield cfg["url"]


@pytest.fixture
async def db(pg_url: str) -> AsyncIterator[Database]:
    db = Database(pg_url, replica_id="sweeper")
    await db.connect()
    await upgrade(db)
    try:
        yield db
    finally:
        await db.close()


def libpq(db: Database) -> str:
    return db.psycopg_conninfo()


async def test_every_session_is_bounded_and_named(pg_url: str):
    """The app's and the checkpointer's sessions carry both bounds and the replica's name
    (the migrations and the libraries' setup run without the statement bound)."""
    db = Database(
        pg_url, idle_in_transaction_timeout_s=5, statement_timeout_s=0.75, replica_id="r1"
    )
    await db.connect()
    try:
        await upgrade(db)
        async with open_persistence(db, StoreConfig()) as persistence:

            def unit(conn: Connection):
                shown = [
                    (conn.execute(text(f"SHOW {name}"))).scalar()
                    for name in ("statement_timeout", "idle_in_transaction_session_timeout")
                ]
                name = (conn.execute(text("SHOW application_name"))).scalar()
                return shown, name

            shown, name = await db.read(unit)
            assert shown == ["750ms", "5s"]
            assert name == "pronghorn/r1"
            pool = persistence.checkpointer.conn  # type: ignore[attr-defined]
            async with pool.connection() as pconn:
                row = await (await pconn.execute("SHOW statement_timeout")).fetchone()
                assert row["statement_timeout"] == "750ms"
                row = await (await pconn.execute("SHOW application_name")).fetchone()
                assert row["application_name"] == "pronghorn/r1"
    finally:
        await db.close()


def session_state(db: Database, pid: int) -> str | None:
    with psycopg.connect(libpq(db), autocommit=True) as conn:
        row = conn.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
    return None if row is None else row[0]


def wait_active_for(db: Database, pid: int, seconds: float) -> None:
    """Until the session has been "active" in one statement for `seconds` (server time)."""
    query = (
        "SELECT state, extract(epoch FROM now() - state_change) FROM pg_stat_activity"
        " WHERE pid = %s"
    )
    deadline = time.monotonic() + 60
    while True:
        with psycopg.connect(libpq(db), autocommit=True) as conn:
            state, age = conn.execute(query, [pid]).fetchone() or (None, 0)
        assert state == "active", f"session {pid} is {state!r}"
        if age >= seconds:
            return
        assert time.monotonic() < deadline
        time.sleep(0.05)


def wait_state(db: Database, pid: int, wanted: str | None) -> None:
    deadline = time.monotonic() + 60
    while (state := session_state(db, pid)) != wanted:
        assert time.monotonic() < deadline, f"session {pid} stayed {state!r}"
        time.sleep(0.05)


async def test_a_session_frozen_half_way_through_a_statement_is_ended_by_the_sweeper(
    db: Database,
):
    """Replica A's event INSERT reached the server without its Sync (A froze while sending):
    the session stays "active" holding the run row (the INSERT's foreign key check locks it
    FOR KEY SHARE), beyond its idle and statement timeouts. Once A's lease lapsed, B's
    sweeper ends it and the run is recovered; replica C's open transaction is left alone."""
    rid = (await new_run(db, thread_status="busy", owner_id="u1"))[1]
    claimed = await db.write(lambda c: run_claims.claim_unclaimed(c, rid, owner="A", lease_s=300))
    assert claimed is not None
    bounds = "-c idle_in_transaction_session_timeout=200 -c statement_timeout=200"
    frozen = psycopg.connect(libpq(db), application_name="pronghorn/A", options=bounds)
    other = psycopg.connect(libpq(db), application_name="pronghorn/C")
    try:
        raw = frozen.pgconn
        raw.enter_pipeline_mode()
        raw.send_query_params(
            b"INSERT INTO run_events (run_id, seq, event, data, created_at)"
            b" VALUES ($1, 1, 'values', '\\x7b7d', now())",
            [rid.encode()],
        )
        raw.send_flush_request()  # what was sent so far, without the Sync that ends it
        while raw.flush():
            pass
        wait_state(db, raw.backend_pid, "active")
        other.execute("SELECT 1")  # C: in a transaction, its leases fine
        await db.write(  # A's lease lapses now, after its INSERT began
            lambda c: c.execute(
                update(runs).where(runs.c.run_id == rid).values(lease_expires_at=func.now())
            )
        )
        wait_active_for(db, raw.backend_pid, 1.0)  # five times its bounds

        def sweep(c):  # type: ignore[no-untyped-def]
            return [
                r.run_id
                for r in run_claims.recover_expired(c, mode="resume", error={}, sweeper="B")
            ]

        assert await db.write(sweep) == []  # locked: skipped, whatever the server's timeouts
        ended = await db.write(lambda c: stale_sessions.end_stale_sessions(c, sweeper="B"))
        assert ended == [raw.backend_pid]
        assert await db.write(sweep) == [rid]
        assert session_state(db, other.pgconn.backend_pid) == "idle in transaction"
    finally:
        other.close()
        frozen.close()
