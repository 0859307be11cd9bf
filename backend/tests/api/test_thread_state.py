"""Thread state, update_state, history and supersteps through the official Python SDK."""

from __future__ import annotations

import uuid

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import (
    BadRequestError,
    ConflictError,
    NotFoundError,
    UnprocessableEntityError,
)

from api.conftest import set_thread_status
from support.inproc import InProcessServer
from support.sdk import values, wire

STATE_KEYS = {
    "values", "next", "tasks", "metadata", "created_at", "checkpoint", "parent_checkpoint",
    "interrupts", "checkpoint_id", "parent_checkpoint_id",
}  # fmt: skip


def human(text: str) -> dict:
    return {"messages": [{"type": "human", "content": text}]}


async def test_empty_thread_state(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    state = await client.threads.get_state(thread["thread_id"])
    assert set(state) == STATE_KEYS
    assert state["values"] == {} and state["next"] == [] and wire(state)["checkpoint_id"] is None
    assert await client.threads.get_history(thread["thread_id"]) == []
    with pytest.raises(BadRequestError):
        await client.threads.update_state(thread["thread_id"], {"turns": 1})
    with pytest.raises(NotFoundError):
        await client.threads.get_state(str(uuid.uuid4()))


async def test_update_state_applies_reducers(client: LangGraphClient) -> None:
    thread = await client.threads.create(graph_id="echo")
    tid = thread["thread_id"]
    first = await client.threads.update_state(tid, human("hi"), as_node="respond")
    assert set(first["checkpoint"]) >= {"thread_id", "checkpoint_ns", "checkpoint_id"}
    assert first["checkpoint"]["thread_id"] == tid
    await client.threads.update_state(tid, {**human("again"), "turns": 2}, as_node="respond")
    state = await client.threads.get_state(tid)
    assert set(state) == STATE_KEYS
    assert [m["content"] for m in values(state)["messages"]] == ["hi", "again"]  # appended
    assert state["metadata"] is not None
    assert values(state)["turns"] == 2 and state["metadata"]["source"] == "update"
    assert wire(state)["parent_checkpoint_id"] == first["checkpoint"]["checkpoint_id"]
    assert state["checkpoint"]["checkpoint_id"] == wire(state)["checkpoint_id"]
    cached = await client.threads.get(tid)  # the row's cached values follow
    assert [m["content"] for m in values(cached)["messages"]] == ["hi", "again"]
    assert wire(cached)["state_updated_at"] >= wire(cached)["created_at"]
    only = await client.threads.get_state(tid, select=["values.turns"])
    assert only["values"] == {"turns": 2}
    # Update from an older checkpoint forks from there.
    fork = await client.threads.update_state(
        tid, human("fork"), checkpoint_id=first["checkpoint"]["checkpoint_id"]
    )
    forked = await client.threads.get_state(tid)
    assert wire(forked)["checkpoint_id"] == fork["checkpoint"]["checkpoint_id"]
    assert [m["content"] for m in values(forked)["messages"]] == ["hi", "fork"]


async def test_update_state_errors(client: LangGraphClient, server: InProcessServer) -> None:
    thread = await client.threads.create(graph_id="echo")
    with pytest.raises(BadRequestError):  # LangGraph rejects it: 400, as the reference
        await client.threads.update_state(thread["thread_id"], {"turns": 1}, as_node="nope")
    async with server.ahttp(base_url=server.api) as http:
        r = await http.post(f"/threads/{thread['thread_id']}/state", json={"values": 5})
        assert r.status_code == 422
    # A busy thread (a run in flight) refuses state updates with 409.
    set_thread_status(server, thread["thread_id"], "busy")
    with pytest.raises(ConflictError):
        await client.threads.update_state(thread["thread_id"], {"turns": 1})


async def test_state_at_checkpoint(client: LangGraphClient) -> None:
    tid = (await client.threads.create(graph_id="echo"))["thread_id"]
    one = await client.threads.update_state(tid, {"turns": 1})
    await client.threads.update_state(tid, {"turns": 2})
    cid = one["checkpoint"]["checkpoint_id"]
    by_id = await client.threads.get_state(tid, checkpoint_id=cid)
    assert values(by_id)["turns"] == 1 and wire(by_id)["checkpoint_id"] == cid
    by_cfg = await client.threads.get_state(tid, checkpoint=one["checkpoint"])
    assert by_cfg["values"] == by_id["values"]
    with pytest.raises(NotFoundError):
        await client.threads.get_state(tid, checkpoint_id=str(uuid.uuid4()))


async def test_history_order_and_before(client: LangGraphClient, server: InProcessServer) -> None:
    tid = (await client.threads.create(graph_id="echo"))["thread_id"]
    for i in range(4):
        await client.threads.update_state(tid, {"turns": i})
    history = await client.threads.get_history(tid)
    assert [values(h)["turns"] for h in history] == [3, 2, 1, 0]  # newest first
    assert all(set(h) == STATE_KEYS for h in history)
    assert [values(h)["turns"] for h in await client.threads.get_history(tid, limit=2)] == [3, 2]
    second = wire(history[1])["checkpoint_id"]
    flat = await client.threads.get_history(tid, before=history[1]["checkpoint"])
    assert [values(h)["turns"] for h in flat] == [1, 0]
    async with server.ahttp(base_url=server.api) as http:  # Q1: both `before` forms
        r = await http.post(
            f"/threads/{tid}/history",
            json={"limit": 10, "before": {"configurable": {"checkpoint_id": second}}},
        )
        assert [h["values"]["turns"] for h in r.json()] == [1, 0]
        r = await http.get(f"/threads/{tid}/history", params={"limit": 1, "before": second})
        assert [h["values"]["turns"] for h in r.json()] == [1]
        r = await http.post(f"/threads/{tid}/history", json={"limit": 0})
        assert r.status_code == 422
    filtered = await client.threads.get_history(tid, metadata={"step": 1})
    assert [(h["metadata"] or {}).get("step") for h in filtered] == [1]


async def test_create_with_supersteps(client: LangGraphClient) -> None:
    thread = await client.threads.create(
        graph_id="echo",
        supersteps=[
            {"updates": [{"values": human("question"), "as_node": "prepare"}]},
            {"updates": [{"values": {"last_echo": "question", "turns": 1}, "as_node": "prepare"}]},
            {"updates": [{"values": human("answer"), "as_node": "respond"}]},
        ],
    )
    assert thread["metadata"] is not None and thread["metadata"]["graph_id"] == "echo"
    assert [m["content"] for m in values(thread)["messages"]] == ["question", "answer"]
    assert values(thread)["turns"] == 1
    history = await client.threads.get_history(thread["thread_id"])
    assert len(history) == 3
    with pytest.raises(BadRequestError):
        await client.threads.create(
            graph_id="echo", supersteps=[{"updates": [{"values": {}, "as_node": "nope"}]}]
        )
    with pytest.raises(UnprocessableEntityError):
        await client.threads.create(supersteps=[{"updates": [{"values": {}, "as_node": "x"}]}])
