"""The accept in statements: on PostgreSQL `resolve_for_accept` reads the assistant and
marks the thread busy (its lock) in one statement, and `accept_resolved` inserts the run
reading the thread's unfinished runs in one more — two statements where there were four —
with the same refusals, claims and rows as the statement-by-statement accept (SQLite's,
and `accept_run` with the queue caps)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.errors import AssistantMissing, ThreadBusy, ThreadMissing
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos.assistants import ensure_system_assistants
from pronghorn.persistence.repos.common import OwnerScope, now
from pronghorn.persistence.repos.run_queue_load import QueueCaps
from pronghorn.persistence.repos.threads import insert_thread
from pronghorn.persistence.tables import runs, threads


class Refused(Exception):
    pass


def _fields() -> run_units.RunFields:
    return {
        "run_id": str(uuid.uuid4()),
        "kwargs": {},
        "metadata": {},
        "multitask_strategy": "enqueue",
        "temporary": False,
        "owner": None,
        "claimable_at": None,
    }


def _claim() -> dict[str, object]:
    return {"owner": "replica-a", "fence": 1, "lease_expires_at": now() + timedelta(seconds=30)}


def _accept(
    conn: Connection,
    thread_id: str,
    *,
    owner: str = "alice",
    assistant_id: str = "echo",
    reject: bool = False,
    claim: bool = False,
    check: bool = True,
    caps: QueueCaps | None = None,
) -> tuple[AssistantRecord, run_units.Accepted]:
    found = run_units.resolve_for_accept(conn, assistant_id, owner, thread_id)
    if not check:  # the caller's check of the assistant (the run manager's validators)
        raise Refused(found.assistant.assistant_id)
    return found.assistant, run_units.accept_resolved(
        conn,
        found,
        thread_id=thread_id,
        create_thread=False,
        reject_if_busy=reject,
        run_fields=_fields(),
        ownership=run_units.RunOwnership(
            owner_id=owner, principal={"identity": owner}, thread_scope=OwnerScope(owner)
        ),
        claim_if_idle=_claim() if claim else None,
        queue_caps=caps,
    )


@contextmanager
def _statements(db: Database) -> Iterator[list[str]]:
    """The statements the app's engine sends (PostgreSQL; BEGIN and COMMIT are not
    statements of the unit)."""
    sent: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        sent.append(" ".join(statement.split()))

    engine = db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


async def _thread(db: Database, owner: str = "alice") -> str:
    tid = str(uuid.uuid4())
    await db.write(lambda c: ensure_system_assistants(c, ["echo"]))
    await db.write(lambda c: insert_thread(c, tid, metadata={}, owner_id=owner))
    return tid


def _run_row(conn: Connection, run_id: str) -> dict[str, object]:
    row = conn.execute(select(runs).where(runs.c.run_id == run_id)).mappings().one()
    return dict(row)


def _thread_row(conn: Connection, thread_id: str) -> dict[str, object]:
    row = conn.execute(select(threads).where(threads.c.thread_id == thread_id)).mappings().one()
    return dict(row)


@pytest.mark.parametrize("db", ["postgres"], indirect=True)
async def test_postgres_accepts_a_run_in_two_statements(db: Database) -> None:
    tid = await _thread(db)
    with _statements(db) as sent:
        assistant, first = await db.write(lambda c: _accept(c, tid, claim=True))
    assert len(sent) == 2, sent
    assert sent[0].startswith("WITH busy_thread AS (UPDATE threads")
    assert "INSERT INTO runs" in sent[1] and "FROM inflight" in sent[1]
    assert assistant.graph_id == "echo" and first.claimed and first.inflight == []
    assert first.run.owner == "replica-a"
    # The thread's first run of the graph: its metadata written by the same statement.
    assert first.thread_metadata["graph_id"] == "echo"
    thread = await db.read(lambda c: _thread_row(c, tid))
    assert thread["status"] == "busy" and thread["metadata"] == first.thread_metadata
    stored = await db.read(lambda c: _run_row(c, first.run.run_id))
    assert (stored["owner"], stored["fence"], stored["status"]) == ("replica-a", 1, "pending")
    assert stored["lease_expires_at"] is not None


@pytest.mark.parametrize("db", ["sqlite", "postgres"], indirect=True)
async def test_a_run_behind_an_unfinished_one_is_queued_unclaimed(db: Database) -> None:
    tid = await _thread(db)
    _, first = await db.write(lambda c: _accept(c, tid, claim=True))
    _, second = await db.write(lambda c: _accept(c, tid, claim=True))
    assert first.claimed and not second.claimed
    assert [r.run_id for r in second.inflight] == [first.run.run_id]
    assert second.run.owner is None
    stored = await db.read(lambda c: _run_row(c, second.run.run_id))
    assert (stored["owner"], stored["fence"], stored["lease_expires_at"]) == (None, 0, None)
    # Nothing to claim with: queued as before (claim_if_idle None).
    _, third = await db.write(lambda c: _accept(c, tid))
    assert [r.run_id for r in third.inflight] == [first.run.run_id, second.run.run_id]
    assert not third.claimed


@pytest.mark.parametrize("db", ["sqlite", "postgres"], indirect=True)
async def test_refusals_come_in_the_same_order_and_write_nothing(db: Database) -> None:
    tid = await _thread(db)
    _, first = await db.write(lambda c: _accept(c, tid))
    before = await db.read(lambda c: _thread_row(c, tid))
    with pytest.raises(AssistantMissing):  # before the thread is looked at
        await db.write(lambda c: _accept(c, str(uuid.uuid4()), assistant_id="nope"))
    with pytest.raises(Refused):  # the caller's check of the assistant, before the thread
        await db.write(lambda c: _accept(c, str(uuid.uuid4()), check=False))
    with pytest.raises(ThreadMissing):
        await db.write(lambda c: _accept(c, str(uuid.uuid4())))
    with pytest.raises(ThreadMissing):  # another user's thread
        await db.write(lambda c: _accept(c, tid, owner="bob"))
    with pytest.raises(ThreadBusy) as busy:
        await db.write(lambda c: _accept(c, tid, reject=True, claim=True))
    assert [r.run_id for r in busy.value.inflight] == [first.run.run_id]
    count = await db.read(
        lambda c: len(c.execute(select(runs.c.run_id).where(runs.c.thread_id == tid)).all())
    )
    assert count == 1  # the refused INSERT rolled back
    assert (await db.read(lambda c: _thread_row(c, tid)))["updated_at"] == before["updated_at"]


@pytest.mark.parametrize("db", ["postgres"], indirect=True)
async def test_with_queue_caps_the_unfinished_runs_are_read_before_the_insert(
    db: Database,
) -> None:
    """The caps count the queue before the run joins it: that accept keeps its own read."""
    tid = await _thread(db)
    await db.write(lambda c: _accept(c, tid))
    caps = QueueCaps(max_queued=100, max_queued_per_user=None)
    with _statements(db) as sent:
        _, second = await db.write(lambda c: _accept(c, tid, caps=caps))
    assert not second.claimed and len(second.inflight) == 1
    assert any(s.startswith("SELECT runs.run_id") for s in sent)
    assert sum(s.startswith("INSERT INTO runs") for s in sent) == 1


def test_the_run_engines_postgres_statements_compile_once() -> None:
    """No parameter of the accept's and the settle's statements is rendered per execution
    (an IN list of literals is: SQLAlchemy's "post-compile" parameters re-render the
    statement's text on every call)."""
    from sqlalchemy.dialects import postgresql

    statements = [
        run_units._ASSISTANT_AND_THREAD,  # pyright: ignore[reportPrivateUsage]
        *run_units._READING_INFLIGHT.values(),  # pyright: ignore[reportPrivateUsage]
        run_units._FINISH_FENCED,  # pyright: ignore[reportPrivateUsage]
        run_units._SETTLE_THREAD_SQL,  # pyright: ignore[reportPrivateUsage]
    ]
    for stmt in statements:
        compiled = stmt.compile(dialect=postgresql.dialect())  # pyright: ignore[reportUnknownMemberType]
        assert not compiled.post_compile_params, str(compiled)
