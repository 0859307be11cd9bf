"""The PostgreSQL saver sends each checkpoint (with its blobs) and each task's writes as one
statement, and stores exactly what LangGraph's stock saver stores.

Statements are counted by the database itself: statement-level triggers on the saver's three
tables count every INSERT statement that reached each table (a data-modifying WITH counts
for its own table)."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from sqlalchemy import text
from sqlalchemy.engine import Connection

from pronghorn.persistence.db import Database
from pronghorn.runtime.checkpoints.checkpoint import Persistence
from testgraphs.echo import EchoState
from testgraphs.echo import graph as echo_graph

pytestmark = pytest.mark.parametrize("db", ["postgres"], indirect=True)

COUNTERS = [
    "CREATE TABLE statement_count (tbl text PRIMARY KEY, n integer NOT NULL)",
    """CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO statement_count VALUES (TG_TABLE_NAME, 1)
        ON CONFLICT (tbl) DO UPDATE SET n = statement_count.n + 1;
        RETURN NULL;
    END $$""",
    *(
        f"CREATE TRIGGER count_{t} AFTER INSERT ON {t} "
        "FOR EACH STATEMENT EXECUTE FUNCTION count_statement()"
        for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
    ),
]


async def _counts(db: Database) -> dict[str, int]:

    def unit(conn: Connection):
        rows = (conn.execute(text("SELECT tbl, n FROM statement_count"))).all()
        return rows

    rows = await db.read(unit)
    return {tbl: n for tbl, n in rows}


async def _rows(db: Database, thread_id: str) -> dict[str, int]:
    out: dict[str, int] = {}

    def unit(conn: Connection):
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            query = text(f"SELECT count(*) FROM {table} WHERE thread_id = :t")
            out[table] = (conn.execute(query, {"t": thread_id})).scalar_one()

    await db.read(unit)
    return out


def _turn(text_: str) -> EchoState:
    return {"messages": [HumanMessage(text_)]}


def _graph(saver):  # untyped like the other checkpoint tests: the echo graph's input is loose
    return echo_graph.copy(update={"checkpointer": saver})


def _cfg(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def test_one_statement_per_checkpoint_and_per_task_writes(
    db: Database, persistence: Persistence
) -> None:

    def unit(conn: Connection):
        for statement in COUNTERS:
            conn.execute(text(statement))

    await db.write(unit)
    ours = _graph(persistence.checkpointer)
    tid = str(uuid.uuid4())
    cfg = _cfg(tid)
    await ours.ainvoke(_turn("one"), cfg, durability="sync")
    await ours.ainvoke(_turn("two"), cfg, durability="sync")

    checkpoints = len([c async for c in persistence.checkpointer.alist(cfg)])
    counts = await _counts(db)
    # one INSERT statement per checkpoint, and no more than one for its blobs
    assert counts["checkpoints"] == checkpoints
    assert counts["checkpoint_blobs"] <= checkpoints
    # the echo graph's steps write several channels each: one statement per task's writes
    rows = await _rows(db, tid)
    assert rows["checkpoint_writes"] > counts["checkpoint_writes"]


async def test_stores_what_the_stock_saver_stores(db: Database, persistence: Persistence) -> None:
    ours = _graph(persistence.checkpointer)
    async with AsyncPostgresSaver.from_conn_string(db.psycopg_conninfo()) as stock_saver:
        stock = _graph(stock_saver)
        a, b = str(uuid.uuid4()), str(uuid.uuid4())
        for graph, tid in ((ours, a), (stock, b)):
            cfg = _cfg(tid)
            await graph.ainvoke(_turn("one"), cfg, durability="sync")
            await graph.ainvoke(_turn("two"), cfg, durability="sync")
        assert await _rows(db, a) == await _rows(db, b)
        # the stock saver reads what ours wrote, history included
        mine = [c async for c in stock_saver.alist(_cfg(a))]
        theirs = [c async for c in stock_saver.alist(_cfg(b))]
        assert [c.metadata.get("step") for c in mine] == [c.metadata.get("step") for c in theirs]
        for m, t in zip(mine, theirs, strict=True):
            assert sorted(m.checkpoint["channel_values"]) == sorted(t.checkpoint["channel_values"])
            # the same writes, in the same order (message ids differ between the threads)
            assert [w[1] for w in m.pending_writes or []] == [w[1] for w in t.pending_writes or []]
        state = await stock.aget_state(_cfg(a))
        assert [m.content for m in state.values["messages"]] == [
            "one",
            "echo: one",
            "two",
            "echo: two",
        ]


async def test_two_writes_to_one_special_channel_keep_the_last(
    persistence: Persistence,
) -> None:
    """A multi-row upsert may not touch a row twice; the row-by-row upsert kept the last."""
    saver = persistence.checkpointer
    graph = _graph(saver)
    tid = str(uuid.uuid4())
    cfg = _cfg(tid)
    await graph.ainvoke(_turn("one"), cfg, durability="sync")
    latest = await saver.aget_tuple(cfg)
    assert latest is not None
    await saver.aput_writes(latest.config, [("__interrupt__", "first"), ("__interrupt__", "last")],
                            "task-1")  # fmt: skip
    await saver.aput_writes(latest.config, [("note", "kept"), ("note", "second")], "task-2")
    again = await saver.aget_tuple(latest.config)
    assert again is not None
    writes = [(task, channel, value) for task, channel, value in again.pending_writes or []]
    assert ("task-1", "__interrupt__", "last") in writes
    assert ("task-1", "__interrupt__", "first") not in writes
    assert ("task-2", "note", "kept") in writes
    assert ("task-2", "note", "second") in writes


async def test_a_task_with_more_writes_than_one_statement_holds(
    persistence: Persistence,
) -> None:
    """9 parameters per write: 8,000 writes in one statement would pass PostgreSQL's 65,535."""
    saver = persistence.checkpointer
    graph = _graph(saver)
    cfg = _cfg(str(uuid.uuid4()))
    await graph.ainvoke(_turn("one"), cfg, durability="sync")
    latest = await saver.aget_tuple(cfg)
    assert latest is not None
    await saver.aput_writes(latest.config, [(f"c{i}", i) for i in range(8000)], "fan-out")
    again = await saver.aget_tuple(latest.config)
    assert again is not None
    mine = [(channel, value) for task, channel, value in again.pending_writes or []
            if task == "fan-out"]  # fmt: skip
    assert len(mine) == 8000
    assert set(mine) == {(f"c{i}", i) for i in range(8000)}
