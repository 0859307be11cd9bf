"""The accept unit refuses with typed values (persistence/errors.py), never with the
runtime's errors, and the runtime maps each in one place (runtime/errors.py)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable

import pytest
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.persistence.errors import AssistantMissing, QueueFull, ThreadBusy, ThreadMissing
from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos.assistants import ensure_system_assistants, insert_assistant
from pronghorn.persistence.repos.common import OwnerScope
from pronghorn.persistence.repos.run_queue_load import QueueCaps, QueueLoad, queue_full
from pronghorn.runtime.errors import Conflict, NotFound, domain_error


def _ownership(owner: str) -> run_units.RunOwnership:
    return run_units.RunOwnership(
        owner_id=owner, principal={"identity": owner}, thread_scope=OwnerScope(owner)
    )


def _accept(
    db: Database, thread_id: str, owner: str, *, reject: bool = False, create: bool = True
) -> Awaitable[run_units.Accepted]:
    def unit(conn: Connection) -> run_units.Accepted:
        assistant = run_units.resolve_assistant(conn, "echo", owner)
        return run_units.accept_run(
            conn,
            assistant=assistant,
            thread_id=thread_id,
            create_thread=create,
            reject_if_busy=reject,
            run_fields={
                "run_id": str(uuid.uuid4()),
                "kwargs": {},
                "metadata": {},
                "multitask_strategy": "reject" if reject else "enqueue",
                "temporary": False,
                "owner": None,
                "claimable_at": None,
            },
            ownership=_ownership(owner),
        )

    return db.write(unit)


async def test_a_busy_thread_refuses_with_its_unfinished_runs(db: Database) -> None:
    await db.write(lambda conn: ensure_system_assistants(conn, ["echo"]))
    tid = str(uuid.uuid4())
    first = await _accept(db, tid, "alice")
    assert first.run.status == "pending" and first.run.thread_id == tid
    second = await _accept(db, tid, "alice")  # enqueue: waits for the first
    assert [r.run_id for r in second.inflight] == [first.run.run_id]
    with pytest.raises(ThreadBusy) as busy:
        await _accept(db, tid, "alice", reject=True)
    assert busy.value.thread_id == tid and busy.value.run_id == first.run.run_id
    assert [r.run_id for r in busy.value.inflight] == [first.run.run_id, second.run.run_id]
    mapped = domain_error(busy.value)
    assert isinstance(mapped, Conflict) and first.run.run_id in mapped.message


async def test_another_users_thread_and_assistant_are_missing(db: Database) -> None:
    await db.write(lambda conn: ensure_system_assistants(conn, ["echo"]))
    tid = str(uuid.uuid4())
    await _accept(db, tid, "alice")
    with pytest.raises(ThreadMissing) as missing:
        await _accept(db, tid, "bob")
    assert missing.value.thread_id == tid
    assert isinstance(domain_error(missing.value), NotFound)
    with pytest.raises(ThreadMissing):
        await _accept(db, str(uuid.uuid4()), "alice", create=False)
    aid = str(uuid.uuid4())
    await db.write(
        lambda conn: insert_assistant(
            conn,
            assistant_id=aid,
            graph_id="echo",
            config={},
            context={},
            metadata={},
            name="mine",
            description=None,
            owner_id="alice",
        )
    )
    assert (await db.read(lambda c: run_units.resolve_assistant(c, aid, "alice"))).name == "mine"
    with pytest.raises(AssistantMissing) as gone:
        await db.read(lambda c: run_units.resolve_assistant(c, aid, "bob"))
    assert gone.value.ref == aid
    assert domain_error(gone.value).message == f"Assistant with ID {aid} not found"


def test_queue_full_names_the_cap_one_more_run_would_pass() -> None:
    caps = QueueCaps(max_queued=3, max_queued_per_user=1)
    assert queue_full(caps, QueueLoad(queued=2, user_queued=0, user_running=5)) is None
    per_user = queue_full(caps, QueueLoad(queued=2, user_queued=1, user_running=5))
    assert isinstance(per_user, QueueFull)
    assert (per_user.cap, per_user.limit, per_user.user_running) == ("max_queued_per_user", 1, 5)
    both = queue_full(caps, QueueLoad(queued=3, user_queued=1, user_running=0))
    assert both is not None and (both.cap, both.limit) == ("max_queued", 3)
    assert queue_full(QueueCaps(), QueueLoad(queued=99, user_queued=99, user_running=0)) is None
