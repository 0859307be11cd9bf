"""The history rewrites of Pronghorn's savers (`acopy_thread`, `adelete_for_runs`, `aprune`)
on real graphs, and the thread sweeper, over the SQLite and PostgreSQL savers."""

from __future__ import annotations

import functools
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, empty_checkpoint
from langgraph.types import Command
from sqlalchemy import update
from sqlalchemy.engine import Connection

from pronghorn.auth.authenticator import NoAuth
from pronghorn.auth.authorizer import AllowAll
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import threads
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import threads as threads_table
from pronghorn.runtime.checkpoints.checkpoint import Persistence
from pronghorn.runtime.services.thread_sweeper import purge_thread, sweep_once
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.sandbox.paths import ThreadPaths
from testgraphs.echo import graph as echo_graph


async def list_oldest_first(
    saver: BaseCheckpointSaver[str], thread_id: str
) -> list[CheckpointTuple]:
    items = [t async for t in saver.alist({"configurable": {"thread_id": thread_id}})]
    items.reverse()
    return items


def _graph(p: Persistence):
    return echo_graph.copy(update={"checkpointer": p.checkpointer, "store": p.store})


def _cfg(thread_id: str, run_id: str | None = None) -> RunnableConfig:
    cfg: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    if run_id:
        cfg["metadata"] = {"run_id": run_id}
    return cfg


async def _turn(graph, thread_id: str, text: str, run_id: str) -> dict:
    msg = {"messages": [{"type": "human", "content": text}]}
    return await graph.ainvoke(msg, _cfg(thread_id, run_id))


async def test_copy_thread_with_pending_interrupt(db: Database, persistence: Persistence) -> None:
    graph = _graph(persistence)
    src, dst = str(uuid.uuid4()), str(uuid.uuid4())
    await _turn(graph, src, "one", "r1")
    await graph.ainvoke(
        {"messages": [{"type": "human", "content": "two"}], "interrupt": True}, _cfg(src, "r2")
    )
    before = await graph.aget_state(_cfg(src))
    assert before.next == ("respond",) and before.interrupts
    await persistence.checkpointer.acopy_thread(src, dst)
    src_all = await list_oldest_first(persistence.checkpointer, src)
    dst_all = await list_oldest_first(persistence.checkpointer, dst)
    assert [t.checkpoint["id"] for t in dst_all] == [t.checkpoint["id"] for t in src_all]
    assert [t.pending_writes for t in dst_all] == [t.pending_writes for t in src_all]
    after = await graph.aget_state(_cfg(dst))
    assert after.values == before.values and after.next == before.next
    assert [i.value for i in after.interrupts] == [i.value for i in before.interrupts]
    src_hist = [
        s.config["configurable"]["checkpoint_id"] async for s in graph.aget_state_history(_cfg(src))
    ]
    dst_hist = [s async for s in graph.aget_state_history(_cfg(dst))]
    assert [s.config["configurable"]["checkpoint_id"] for s in dst_hist] == src_hist
    assert all(s.config["configurable"]["thread_id"] == dst for s in dst_hist)
    # The copy resumes on its own; the source keeps its pending interrupt.
    done = await graph.ainvoke(Command(resume="yes"), _cfg(dst))
    assert done["answer"] == "yes" and done["messages"][-1].content == "echo: two"
    assert (await graph.aget_state(_cfg(src))).next == ("respond",)


async def test_delete_run_checkpoints(db: Database, persistence: Persistence) -> None:
    graph = _graph(persistence)
    tid = str(uuid.uuid4())
    await _turn(graph, tid, "one", "r1")
    after_r1 = await graph.aget_state(_cfg(tid))
    await _turn(graph, tid, "two", "r2")
    assert (await graph.aget_state(_cfg(tid))).values["turns"] == 2
    before = await list_oldest_first(persistence.checkpointer, tid)
    await persistence.checkpointer.adelete_for_runs(["r2"])
    after = await list_oldest_first(persistence.checkpointer, tid)
    assert [t.checkpoint["id"] for t in after] == [
        t.checkpoint["id"] for t in before if t.metadata.get("run_id") != "r2"
    ]
    state = await graph.aget_state(_cfg(tid))
    assert state.values == after_r1.values
    assert (
        state.config["configurable"]["checkpoint_id"]
        == after_r1.config["configurable"]["checkpoint_id"]
    )
    await persistence.checkpointer.adelete_for_runs(["r2"])  # nothing left to do
    assert len(await list_oldest_first(persistence.checkpointer, tid)) == len(after)
    await _turn(graph, tid, "three", "r3")  # the thread continues from r1's end
    assert (await graph.aget_state(_cfg(tid))).values["turns"] == 2


async def test_keep_latest(db: Database, persistence: Persistence) -> None:
    graph = _graph(persistence)
    tid = str(uuid.uuid4())
    await _turn(graph, tid, "one", "r1")
    await _turn(graph, tid, "two", "r2")
    latest = await graph.aget_state(_cfg(tid))
    await persistence.checkpointer.aprune([tid], strategy="keep_latest")
    history = [s async for s in graph.aget_state_history(_cfg(tid))]
    assert len(history) == 1 and history[0].values == latest.values
    assert history[0].parent_config is None


def _runtime(db: Database, persistence: Persistence, tmp_path: Path) -> AppRuntime:
    return AppRuntime(
        settings=None,  # type: ignore[arg-type]
        data_dir=tmp_path,
        db=db,
        checkpointer=persistence.checkpointer,
        store=persistence.store,
        graphs=None,  # type: ignore[arg-type]
        authenticator=NoAuth(),
        authorizer=AllowAll(),
    )


async def test_purge_and_sweep(db: Database, persistence: Persistence, tmp_path: Path) -> None:
    runtime = _runtime(db, persistence, tmp_path)
    graph = _graph(persistence)
    gone, pruned, alive = (str(uuid.uuid4()) for _ in range(3))
    for tid, strategy in ((gone, "delete"), (pruned, "keep_latest"), (alive, "delete")):
        ttl = {"ttl": 5, "strategy": strategy}
        await db.write(functools.partial(threads.insert_thread, thread_id=tid, ttl=ttl))
        await _turn(graph, tid, "one", "r1")
        await _turn(graph, tid, "two", "r2")
    files = ThreadPaths.for_thread(tmp_path, "default", gone)
    files.ensure()
    await db.write(
        lambda conn: conn.execute(
            update(threads_table)
            .where(threads_table.c.thread_id.in_([gone, pruned]))
            .values(expires_at=now() - timedelta(seconds=1))
        )
    )
    assert await sweep_once(runtime) == 2

    def unit(conn: Connection):
        assert threads.get_row(conn, gone) is None
        assert threads.get_row(conn, alive) is not None
        kept = threads.get_row(conn, pruned)
        return kept

    kept = await db.read(unit)
    assert kept is not None and kept.expires_at is not None  # renewed
    assert await list_oldest_first(persistence.checkpointer, gone) == []
    assert len(await list_oldest_first(persistence.checkpointer, pruned)) == 1
    assert len(await list_oldest_first(persistence.checkpointer, alive)) > 1
    assert not files.root.exists()
    assert await sweep_once(runtime) == 0
    assert await purge_thread(runtime, alive)
    assert not await purge_thread(runtime, alive)
    assert await list_oldest_first(persistence.checkpointer, alive) == []


async def test_rollback_of_a_middle_run_repoints_the_next_run(
    db: Database, persistence: Persistence
) -> None:
    graph = _graph(persistence)
    tid = str(uuid.uuid4())
    for i, run_id in enumerate(("r1", "r2", "r3")):
        await _turn(graph, tid, f"turn {i}", run_id)
    before = await list_oldest_first(persistence.checkpointer, tid)
    r1_last = [t for t in before if t.metadata["run_id"] == "r1"][-1].checkpoint["id"]
    await persistence.checkpointer.adelete_for_runs(["r2"])
    after = await list_oldest_first(persistence.checkpointer, tid)
    assert {t.metadata["run_id"] for t in after} == {"r1", "r3"}
    first_r3 = next(t for t in after if t.metadata["run_id"] == "r3")
    assert first_r3.parent_config is not None
    assert first_r3.parent_config["configurable"]["checkpoint_id"] == r1_last
    # the chain is whole: newest to oldest through parent links, every kept checkpoint once
    by_id = {t.checkpoint["id"]: t for t in after}
    walk, node = [], after[-1]
    while node is not None:
        walk.append(node.checkpoint["id"])
        parent = node.parent_config
        node = by_id.get(parent["configurable"]["checkpoint_id"]) if parent else None
    assert sorted(walk) == sorted(by_id)
    state = await graph.aget_state(_cfg(tid))
    assert state.values["last_echo"] == "turn 2"


async def test_rewrites_leave_no_unreferenced_blobs_on_postgres(
    db: Database, persistence: Persistence
) -> None:
    if db.is_sqlite:
        return  # SQLite keeps values inside each checkpoint row: no separate blobs
    from sqlalchemy import text

    saver = persistence.checkpointer
    graph = _graph(persistence)
    tid, dst = str(uuid.uuid4()), str(uuid.uuid4())
    await _turn(graph, tid, "one", "r1")
    await _turn(graph, tid, "two", "r2")

    orphans = text(
        "SELECT COUNT(*) FROM checkpoint_blobs b WHERE b.thread_id = :t AND NOT EXISTS ("
        " SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id"
        " AND c.checkpoint_ns = b.checkpoint_ns"
        " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"
    )
    blobs = text("SELECT COUNT(*) FROM checkpoint_blobs WHERE thread_id = :t")

    async def count(sql, thread_id: str) -> int:

        def unit(conn: Connection):
            return int((conn.execute(sql, {"t": thread_id})).scalar() or 0)

        return await db.read(unit)

    had = await count(blobs, tid)
    await saver.acopy_thread(tid, dst)
    assert await count(blobs, dst) == had  # the copy has its own
    await _turn(graph, tid, "three", "r3")
    assert await count(blobs, tid) > had
    await saver.adelete_for_runs(["r3"])  # a run of the source only
    assert await count(orphans, tid) == 0
    assert await count(blobs, tid) == had
    assert await count(blobs, dst) == had
    assert (await graph.aget_state(_cfg(dst))).values["last_echo"] == "two"
    assert (await graph.aget_state(_cfg(tid))).values["last_echo"] == "two"
    # A run's checkpoints go from every thread that holds them, copies included.
    await saver.adelete_for_runs(["r2"])
    for thread_id in (tid, dst):
        assert await count(orphans, thread_id) == 0
        assert await count(blobs, thread_id) < had
        assert (await graph.aget_state(_cfg(thread_id))).values["last_echo"] == "one"


async def test_keep_latest_refuses_a_delta_channel_thread_and_bad_arguments(
    db: Database, persistence: Persistence
) -> None:
    """A `DeltaChannel` rebuilds its value from older checkpoints: pruning them would lose
    it, so `keep_latest` refuses such a thread and prunes nothing (as LangGraph's PostgreSQL
    saver does)."""
    saver = persistence.checkpointer
    tid = str(uuid.uuid4())
    config: dict = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    delta: dict = {"counters_since_delta_snapshot": {"messages": [1, 1]}}
    for _ in range(2):
        config = await saver.aput(config, empty_checkpoint(), delta, {})  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="DeltaChannel"):
        await saver.aprune([tid], strategy="keep_latest")
    assert len(await list_oldest_first(saver, tid)) == 2
    with pytest.raises(ValueError, match="strategy"):
        await saver.aprune([tid], strategy="keep_some")
    with pytest.raises(TypeError):
        await saver.adelete_for_runs("r1")
    with pytest.raises(TypeError):
        await saver.aprune(tid)
    await saver.aprune([tid], strategy="delete")
    assert await list_oldest_first(saver, tid) == []


async def test_the_prune_service_answers_a_delta_channel_thread_unprocessable(
    db: Database, persistence: Persistence, tmp_path: Path
) -> None:
    from pronghorn.auth.principal import Principal
    from pronghorn.runtime.access import Access
    from pronghorn.runtime.errors import Unprocessable
    from pronghorn.runtime.services import threads as threads_service

    runtime = _runtime(db, persistence, tmp_path)
    tid = str(uuid.uuid4())
    await db.write(lambda conn: threads.insert_thread(conn, tid, owner_id="alice"))
    config: dict = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    delta: dict = {"counters_since_delta_snapshot": {"messages": [1, 1]}}
    for _ in range(2):
        config = await persistence.checkpointer.aput(config, empty_checkpoint(), delta, {})  # type: ignore[arg-type]
    access = Access(Principal(identity="alice", display_name="Alice"))
    with pytest.raises(Unprocessable, match="DeltaChannel"):
        await threads_service.prune(runtime, access, [tid], "keep_latest")
    assert len(await list_oldest_first(persistence.checkpointer, tid)) == 2


async def test_a_copy_whose_thread_row_fails_takes_its_checkpoints_back(
    db: Database, persistence: Persistence, tmp_path: Path
) -> None:
    """The copy's checkpoints are written first; when the new thread's row then fails (here
    the database refuses it, by a trigger), they are deleted again: no stray history."""
    from sqlalchemy import text

    from pronghorn.auth.principal import Principal
    from pronghorn.runtime.access import Access
    from pronghorn.runtime.services import threads as threads_service

    runtime = _runtime(db, persistence, tmp_path)
    access = Access(Principal(identity="alice", display_name="Alice"))
    src = str(uuid.uuid4())
    await db.write(lambda conn: threads.insert_thread(conn, src, owner_id="alice"))
    await _turn(_graph(persistence), src, "one", "r1")
    if db.is_sqlite:
        refuse = [
            "CREATE TRIGGER refuse_threads BEFORE INSERT ON threads "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        ]
    else:
        refuse = [
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused'; END $$",
            "CREATE TRIGGER refuse_threads BEFORE INSERT ON threads "
            "FOR EACH ROW EXECUTE FUNCTION refuse()",
        ]

    def unit(conn: Connection):
        for statement in refuse:
            conn.execute(text(statement))

    await db.write(unit)
    with pytest.raises(Exception, match="refused"):
        await threads_service.copy(runtime, access, src)
    everything = [t async for t in persistence.checkpointer.alist(None)]
    assert everything and {t.config["configurable"]["thread_id"] for t in everything} == {src}
