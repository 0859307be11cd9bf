"""LangGraph's SqliteSaver / SqliteStore on the SQLite worker
(runtime/checkpoints/sqlite_checkpoint.py):
real graphs, real files, concurrent runs sharing commits."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Durability
from typing_extensions import TypedDict

from pronghorn.config.schema.app import StoreConfig
from pronghorn.persistence.db import Database, default_sqlite_url
from pronghorn.persistence.migrate import upgrade
from pronghorn.runtime.checkpoints.checkpoint import Persistence, open_persistence
from pronghorn.runtime.checkpoints.sqlite_checkpoint import WorkerSqliteSaver, WorkerSqliteStore


class S(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    n: int


async def step_a(state: S) -> S:
    return {"n": 1}


async def step_b(state: S) -> S:
    return {"n": int(state.get("n") or 0) + 1, "messages": [("ai", "done")]}


def two_step_graph(saver: WorkerSqliteSaver):
    b = StateGraph(S)
    b.add_node("a", step_a)
    b.add_node("b", step_b)
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", END)
    return b.compile(checkpointer=saver)


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = Database(default_sqlite_url(tmp_path))
    await db.connect()
    await upgrade(db)
    try:
        yield db
    finally:
        await db.close()


@pytest.fixture
async def persistence(sqlite_db: Database) -> AsyncIterator[Persistence]:
    async with open_persistence(sqlite_db, StoreConfig()) as p:
        yield p


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_concurrent_runs_keep_full_history(
    sqlite_db: Database, persistence: Persistence, durability: Durability
) -> None:
    saver = persistence.checkpointer
    assert isinstance(saver, WorkerSqliteSaver)
    graph = two_step_graph(saver)
    stats = sqlite_db.sqlite_worker.stats
    before_writes, before_commits = stats.writes, stats.commits

    async def one(i: int) -> None:
        cfg: RunnableConfig = {"configurable": {"thread_id": f"t{i}"}}
        out = await graph.ainvoke({"messages": [("user", f"hi {i}")]}, cfg, durability=durability)
        assert out["n"] == 2

    await asyncio.gather(*(one(i) for i in range(24)))
    for i in range(24):
        cfg: RunnableConfig = {"configurable": {"thread_id": f"t{i}"}}
        history = [s async for s in graph.aget_state_history(cfg)]
        # input, start, after a, after b — a checkpoint per step, except in exit mode.
        assert len(history) == (1 if durability == "exit" else 4)
        assert history[0].values["n"] == 2
        assert [m.content for m in history[0].values["messages"]] == [f"hi {i}", "done"]
    writes = stats.writes - before_writes
    commits = stats.commits - before_commits
    assert writes >= 24
    assert commits < writes, "concurrent checkpoint writes should share commits"
    # Committed for any other connection to see.
    with sqlite3.connect(sqlite_db.sqlite_path or "") as other:
        threads = other.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()
    assert threads == (24,)


async def test_delete_thread_and_list(persistence: Persistence) -> None:
    saver = persistence.checkpointer
    graph = two_step_graph(saver)  # type: ignore[arg-type]
    for t in ("keep", "drop"):
        await graph.ainvoke({"n": 0}, {"configurable": {"thread_id": t}})
    await saver.adelete_thread("drop")
    assert [c async for c in saver.alist({"configurable": {"thread_id": "drop"}})] == []
    kept = [c async for c in saver.alist({"configurable": {"thread_id": "keep"}}, limit=2)]
    assert len(kept) == 2


async def test_store_round_trip_and_ttl_sweep(persistence: Persistence) -> None:
    store = persistence.store
    assert isinstance(store, WorkerSqliteStore)
    await store.aput(("users", "u1"), "prefs", {"theme": "dark"})
    await store.aput(("users", "u1"), "old", {"x": 1}, ttl=0.0001)  # minutes
    item = await store.aget(("users", "u1"), "prefs")
    assert item is not None and item.value == {"theme": "dark"}
    found = await store.asearch(("users",), filter={"theme": "dark"})
    assert [i.key for i in found] == ["prefs"]
    assert await store.alist_namespaces(prefix=("users",)) == [("users", "u1")]
    deadline = asyncio.get_running_loop().time() + 30
    swept = 0
    while swept == 0:
        swept = await store.sweep_ttl()
        assert asyncio.get_running_loop().time() < deadline, "TTL item never expired"
        if swept == 0:
            await asyncio.sleep(0.05)
    assert await store.aget(("users", "u1"), "old") is None
