"""Assistant and thread repositories on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Connection

from pronghorn.ids import system_assistant_id
from pronghorn.persistence.db import Database
from pronghorn.persistence.errors import ThreadMissing
from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.repos import assistants, threads
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import threads as threads_table
from pronghorn.runtime.services.thread_json import thread_json
from support.sdk import as_object


async def _make_assistant(db: Database, **kw) -> AssistantRecord:
    fields = {"graph_id": "echo", "config": {}, "context": {}, "metadata": {}, "name": "a"}
    fields.update(kw)
    return await db.write(
        lambda conn: assistants.insert_assistant(
            conn, assistant_id=str(uuid.uuid4()), description=None, **fields
        )
    )


async def test_resolve_assistant(db: Database) -> None:
    await db.write(lambda conn: assistants.ensure_system_assistants(conn, ["echo"]))
    made = await _make_assistant(db)

    def unit(conn: Connection):
        by_graph = assistants.resolve_assistant(conn, "echo")
        assert by_graph is not None and by_graph.assistant_id == system_assistant_id("echo")
        by_id = assistants.resolve_assistant(conn, made.assistant_id)
        assert by_id is not None and by_id.name == "a"
        by_upper = assistants.resolve_assistant(conn, made.assistant_id.upper())
        assert by_upper is not None and by_upper.assistant_id == made.assistant_id
        assert assistants.resolve_assistant(conn, "unknown_graph") is None
        assert assistants.resolve_assistant(conn, str(uuid.uuid4())) is None

    await db.read(unit)


async def test_assistant_versions(db: Database) -> None:
    made = await _make_assistant(db, metadata={"a": 1, "b": {"c": [1, 2]}})
    aid = made.assistant_id

    def step1(conn: Connection):
        v2 = assistants.update_assistant(conn, aid, name="two", metadata={"a": 2})
        assert v2 is not None and v2.version == 2 and v2.metadata == {"a": 2, "b": {"c": [1, 2]}}
        v3 = assistants.update_assistant(conn, aid, config={"tags": ["x"]})
        assert v3 is not None
        assert v3.version == 3 and v3.name == "two" and v3.config == {"tags": ["x"]}
        assert assistants.update_assistant(conn, str(uuid.uuid4()), name="x") is None

    await db.write(step1)

    def step2(conn: Connection):
        versions = assistants.list_versions(conn, aid)
        assert [v.version for v in versions] == [3, 2, 1]
        assert [v.version for v in assistants.list_versions(conn, aid, limit=1)] == [3]
        nested = assistants.list_versions(conn, aid, metadata={"b": {"c": [2]}})
        assert [v.version for v in nested] == [3, 2, 1]
        assert assistants.list_versions(conn, aid, metadata={"a": 1}) != []

    await db.read(step2)

    def step3(conn: Connection):
        back = assistants.set_latest(conn, aid, 1)
        assert (
            back is not None and back.version == 1 and back.name == "a" and back.metadata["a"] == 1
        )
        assert assistants.set_latest(conn, aid, 42) is None
        v4 = assistants.update_assistant(conn, aid, description="d")
        assert v4 is not None and v4.version == 4  # numbering continues after set_latest
        assert assistants.delete_assistant(conn, aid)
        assert not assistants.delete_assistant(conn, aid)
        assert assistants.list_versions(conn, aid) == []

    await db.write(step3)


async def test_assistant_search(db: Database) -> None:
    tag = uuid.uuid4().hex
    for i, name in enumerate(["Alpha", "beta", "ALPHABET", "100%_odd"]):
        await _make_assistant(db, name=name, metadata={"tag": tag, "i": i, "on": i % 2 == 0})

    def unit(conn: Connection):
        found, total = assistants.search(conn, metadata={"tag": tag}, name="alpha")
        assert total == 2 and {a.name for a in found} == {"Alpha", "ALPHABET"}
        found, _ = assistants.search(conn, metadata={"tag": tag}, name="%_")
        assert [a.name for a in found] == ["100%_odd"]  # LIKE wildcards are literal
        found, total = assistants.search(
            conn, metadata={"tag": tag}, sort_by="name", sort_order="asc", limit=2, offset=1
        )
        assert total == 4 and len(found) == 2
        assert assistants.count(conn, metadata={"tag": tag, "on": True}) == 2
        assert assistants.count(conn, metadata={"tag": tag}, graph_id="other") == 0

    await db.read(unit)


async def test_thread_crud_and_ttl(db: Database) -> None:
    tid = str(uuid.uuid4())
    ttl, expires_at = threads.ttl_fields({"ttl": 10, "strategy": "keep_latest"})

    def step1(conn: Connection):
        made = threads.insert_thread(conn, tid, metadata={"a": 1}, ttl=ttl, expires_at=expires_at)
        assert made.status == "idle" and "ttl" not in thread_json(made)
        updated = threads.update_thread(conn, tid, metadata={"b": 2})
        assert updated is not None and updated.metadata == {"a": 1, "b": 2}
        with pytest.raises(ThreadMissing):
            threads.update_thread(conn, str(uuid.uuid4()), metadata={})
        row = threads.get_row(conn, tid)
        assert row is not None
        shown = as_object(thread_json(row, include_ttl=True)["ttl"])
        assert shown["strategy"] == "keep_latest" and shown["ttl_minutes"] == 10
        threads.update_thread(conn, tid, ttl=None)  # clears
        row = threads.get_row(conn, tid)
        assert row is not None and row.ttl is None and row.expires_at is None

    await db.write(step1)
    other = str(uuid.uuid4())

    def step2(conn: Connection):
        threads.insert_thread(conn, other, ttl={"ttl": 1, "strategy": "delete"})
        conn.execute(
            update(threads_table)
            .where(threads_table.c.thread_id == other)
            .values(expires_at=now() - timedelta(seconds=1))
        )

    await db.write(step2)

    def step3(conn: Connection):
        assert (other, "delete") in threads.expired(conn)
        assert all(t != tid for t, _ in threads.expired(conn))

    await db.read(step3)

    def step4(conn: Connection):
        assert threads.delete_thread(conn, other)
        assert not threads.delete_thread(conn, other)

    await db.write(step4)


async def test_thread_search(db: Database) -> None:
    tag = uuid.uuid4().hex
    ids = []

    def step1(conn: Connection):
        for i in range(4):
            tid = str(uuid.uuid4())
            ids.append(tid)
            threads.insert_thread(conn, tid, metadata={"tag": tag, "i": i, "l": [i]})
            threads.set_fields(
                conn,
                tid,
                values={"n": i, "msgs": [{"c": f"m{i}"}]},
                status="interrupted" if i == 3 else "idle",
            )

    await db.write(step1)

    def step2(conn: Connection):
        found, total = threads.search_rows(conn, metadata={"tag": tag})
        assert total == 4 and [t.thread_id for t in found] == ids[::-1]  # newest first
        found, _ = threads.search_rows(conn, metadata={"tag": tag, "l": [2]})
        assert [t.thread_id for t in found] == [ids[2]]
        found, _ = threads.search_rows(conn, values={"msgs": [{"c": "m1"}]})
        assert [t.thread_id for t in found] == [ids[1]]
        found, _ = threads.search_rows(conn, values={"n": 0}, metadata={"tag": tag})
        assert [t.thread_id for t in found] == [ids[0]]
        found, _ = threads.search_rows(conn, ids=ids[:2], sort_by="thread_id", sort_order="asc")
        assert [t.thread_id for t in found] == sorted(ids[:2])
        assert threads.count(conn, metadata={"tag": tag}, status="interrupted") == 1
        page, total = threads.search_rows(conn, metadata={"tag": tag}, limit=3, offset=3)
        assert total == 4 and len(page) == 1

    await db.read(step2)
