"""Threads API (CRUD, search, count, prune, copy) through the official Python SDK."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from support.inproc import InProcessServer
from support.sdk import values, wire


async def test_create_get_conflict(client: LangGraphClient) -> None:
    tid = str(uuid.uuid4())
    made = await client.threads.create(thread_id=tid, metadata={"owner": "ann"})
    assert made["thread_id"] == tid and made["status"] == "idle"
    assert made["metadata"] == {"owner": "ann"} and made["values"] == {}
    assert made["interrupts"] == {} and "ttl" not in made
    with pytest.raises(ConflictError):
        await client.threads.create(thread_id=tid)
    same = await client.threads.create(thread_id=tid, if_exists="do_nothing")
    assert same["metadata"] == {"owner": "ann"}
    got = await client.threads.get(tid)
    assert got["thread_id"] == tid and got["created_at"] == made["created_at"]
    fresh = await client.threads.create(graph_id="echo")
    assert fresh["metadata"] == {"graph_id": "echo"} and uuid.UUID(fresh["thread_id"])


async def test_errors(client: LangGraphClient, server: InProcessServer) -> None:
    with pytest.raises(NotFoundError):
        await client.threads.get(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        await client.threads.update(str(uuid.uuid4()), metadata={"a": 1})
    with pytest.raises(NotFoundError):
        await client.threads.delete(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        await client.threads.copy(str(uuid.uuid4()))
    with pytest.raises(UnprocessableEntityError) as err:
        await client.threads.get("not-a-uuid")
    assert "Invalid thread ID: must be a UUID" in str(err.value)
    with pytest.raises(UnprocessableEntityError):
        await client.threads.create(thread_id="nope")
    async with server.ahttp(base_url=server.api) as http:
        r = await http.post("/threads", json={"metadata": "not an object"})
        assert r.status_code == 422 and r.json()["detail"]
        r = await http.post(
            "/threads/search", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert r.status_code == 422
        r = await http.post("/threads", json={"if_exists": "maybe"})
        assert r.status_code == 422
        r = await http.post("/threads/prune", json={})
        assert r.status_code == 422


async def test_patch_and_ttl(client: LangGraphClient) -> None:
    made = await client.threads.create(metadata={"a": 1, "b": 2}, ttl=30)
    tid = made["thread_id"]
    updated = await client.threads.update(tid, metadata={"b": 3, "c": 4})
    assert updated["metadata"] == {"a": 1, "b": 3, "c": 4}
    assert await client.threads.update(tid, metadata={"d": 5}, return_minimal=True) is None
    with_ttl = await client.threads.get(tid, include=["ttl"])
    assert with_ttl["metadata"] is not None and with_ttl["metadata"]["d"] == 5
    ttl = wire(with_ttl)["ttl"]
    assert ttl["strategy"] == "delete" and ttl["ttl_minutes"] == 30
    remaining = datetime.fromisoformat(ttl["expires_at"]) - datetime.fromisoformat(
        wire(with_ttl)["created_at"]
    )
    assert 25 * 60 < remaining.total_seconds() < 35 * 60
    await client.threads.update(tid, metadata={}, ttl={"ttl": 5, "strategy": "keep_latest"})
    assert wire(await client.threads.get(tid, include=["ttl"]))["ttl"]["strategy"] == "keep_latest"


async def test_delete_returns_204(client: LangGraphClient, server: InProcessServer) -> None:
    made = await client.threads.create()
    async with server.ahttp(base_url=server.api) as http:
        r = await http.delete(f"/threads/{made['thread_id']}")
        assert r.status_code == 204 and r.content == b""
        r = await http.delete(f"/threads/{made['thread_id']}")
        assert r.status_code == 404 and r.json()["detail"]


async def test_search_count_pagination(client: LangGraphClient, server: InProcessServer) -> None:
    tag = uuid.uuid4().hex
    made = [
        await client.threads.create(metadata={"tag": tag, "i": i, "nested": {"k": [i]}})
        for i in range(5)
    ]
    found = await client.threads.search(metadata={"tag": tag})
    assert [t["thread_id"] for t in found] == [t["thread_id"] for t in reversed(made)]
    asc = await client.threads.search(
        metadata={"tag": tag}, sort_by="created_at", sort_order="asc", select=["thread_id"]
    )
    assert [t["thread_id"] for t in asc] == [t["thread_id"] for t in made]
    assert set(asc[0]) == {"thread_id"}
    nested = await client.threads.search(metadata={"tag": tag, "nested": {"k": [3]}})
    assert [(t["metadata"] or {}).get("i") for t in nested] == [3]
    ids = await client.threads.search(ids=[made[0]["thread_id"], made[2]["thread_id"]])
    assert {t["thread_id"] for t in ids} == {made[0]["thread_id"], made[2]["thread_id"]}
    assert await client.threads.search(metadata={"tag": tag}, status="busy") == []
    assert len(await client.threads.search(metadata={"tag": tag}, status="idle")) == 5
    assert await client.threads.count(metadata={"tag": tag}) == 5
    assert await client.threads.count(metadata={"tag": tag, "i": 1}) == 1
    extracted = await client.threads.search(
        metadata={"tag": tag, "i": 2}, extract={"n": "metadata.nested.k[0]", "t": "$.metadata.tag"}
    )
    assert extracted[0]["extracted"] == {"n": 2, "t": tag}
    async with server.ahttp(base_url=server.api) as http:
        r = await http.post("/threads/search", json={"metadata": {"tag": tag}, "limit": 2})
        # not counted: "at least one more" on a page with a next one (as the reference)
        assert r.headers["X-Pagination-Total"] == "3" and r.headers["X-Pagination-Next"] == "2"
        r = await http.post(
            "/threads/search", json={"metadata": {"tag": tag}, "limit": 2, "offset": 4}
        )
        assert len(r.json()) == 1 and "X-Pagination-Next" not in r.headers
        assert r.headers["X-Pagination-Total"] == "5"  # the last page: exact


async def test_search_by_values(client: LangGraphClient) -> None:
    word = uuid.uuid4().hex
    thread = await client.threads.create(graph_id="echo")
    await client.threads.update_state(thread["thread_id"], {"last_echo": word, "turns": 7})
    hits = await client.threads.search(values={"last_echo": word})
    assert [t["thread_id"] for t in hits] == [thread["thread_id"]]
    assert values(hits[0])["turns"] == 7
    assert await client.threads.count(values={"last_echo": word, "turns": 7}) == 1
    assert await client.threads.count(values={"last_echo": word, "turns": 8}) == 0


async def test_prune(client: LangGraphClient) -> None:
    doomed = await client.threads.create()
    kept = await client.threads.create(graph_id="echo")
    for i in range(3):
        await client.threads.update_state(kept["thread_id"], {"turns": i})
    assert len(await client.threads.get_history(kept["thread_id"])) == 3
    out = await client.threads.prune([doomed["thread_id"], str(uuid.uuid4())])
    assert out == {"pruned_count": 1}
    with pytest.raises(NotFoundError):
        await client.threads.get(doomed["thread_id"])
    out = await client.threads.prune([kept["thread_id"]], strategy="keep_latest")
    assert out == {"pruned_count": 1}
    history = await client.threads.get_history(kept["thread_id"])
    assert len(history) == 1 and values(history[0])["turns"] == 2


async def test_copy(client: LangGraphClient) -> None:
    src = await client.threads.create(graph_id="echo", metadata={"who": "me"})
    for text in ("one", "two"):
        await client.threads.update_state(
            src["thread_id"], {"messages": [{"type": "human", "content": text}]}, as_node="respond"
        )
    dup = await client.threads.copy(src["thread_id"])
    assert dup is not None
    assert dup["thread_id"] != src["thread_id"]
    assert dup["metadata"] == {"who": "me", "graph_id": "echo"}
    assert [m["content"] for m in values(dup)["messages"]] == ["one", "two"]
    src_hist = await client.threads.get_history(src["thread_id"])
    dup_hist = await client.threads.get_history(dup["thread_id"])
    assert [wire(h)["checkpoint_id"] for h in dup_hist] == [
        wire(h)["checkpoint_id"] for h in src_hist
    ]
    assert dup_hist[0]["checkpoint"]["thread_id"] == dup["thread_id"]
    assert wire(dup_hist[0])["parent_checkpoint_id"] == wire(src_hist[0])["parent_checkpoint_id"]
    # The copy is independent: writing to it leaves the source alone.
    await client.threads.update_state(
        dup["thread_id"], {"messages": [{"type": "human", "content": "three"}]}, as_node="respond"
    )
    assert len(values(await client.threads.get_state(src["thread_id"]))["messages"]) == 2
    await client.threads.delete(src["thread_id"])
    assert len(values(await client.threads.get_state(dup["thread_id"]))["messages"]) == 3
