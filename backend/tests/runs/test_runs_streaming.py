"""Every stream mode through the official SDK, and the SSE bytes on the wire."""

from __future__ import annotations

import json

import pytest

from runs.runkit import Frame, human, parse_frames, read_events
from support.inproc import InProcessServer


async def _events(client, thread_id, **kwargs):
    return [p async for p in client.runs.stream(thread_id, "echo", **kwargs)]


async def test_default_mode_is_values_with_metadata_first(client):
    t = await client.threads.create()
    parts = await _events(client, t["thread_id"], input=human("hi"))
    assert parts[0].event == "metadata"
    assert set(parts[0].data) == {"run_id", "attempt"} and parts[0].data["attempt"] == 1
    assert [p.event for p in parts[1:]] == ["values"] * (len(parts) - 1)
    last = parts[-1].data
    assert last["messages"][-1]["content"] == "echo: hi"
    assert last["messages"][-1]["type"] == "ai"


async def test_updates_custom_and_tuple_modes_in_order(client):
    t = await client.threads.create()
    parts = await _events(
        client,
        t["thread_id"],
        input=human("yo"),
        stream_mode=["updates", "custom", "messages-tuple"],
    )
    names = [p.event for p in parts]
    assert names == ["metadata", "custom", "updates", "custom", "messages", "updates"]
    assert parts[2].data == {"prepare": {"sleep": 0.0, "interrupt": False, "fail": False}}
    message, meta = parts[4].data
    assert message["content"] == "echo: yo" and message["type"] == "ai"
    assert meta["langgraph_node"] == "respond"
    assert meta["thread_id"] == t["thread_id"] and meta["graph_id"] == "echo"


async def test_token_chunks_in_messages_modes(client):
    t = await client.threads.create()
    parts = await _events(
        client, t["thread_id"], input={**human("x"), "chunks": 5}, stream_mode=["messages-tuple"]
    )
    chunks = [p.data[0]["content"] for p in parts if p.event == "messages"]
    assert "".join(chunks[:9]) == "t0 t1 t2 t3 t4"
    legacy = await _events(
        client, t["thread_id"], input={**human("x"), "chunks": 3}, stream_mode=["messages"]
    )
    names = [p.event for p in legacy]
    assert names[1] == "messages/metadata"
    assert "messages/partial" in names
    assert names[-1] == "messages/complete"
    assert legacy[-1].data[0]["content"] == "t0 t1 t2"
    partials = [p.data[0]["content"] for p in legacy if p.event == "messages/partial"]
    assert partials == sorted(partials, key=len)  # accumulating


@pytest.mark.parametrize("mode", ["debug", "tasks", "checkpoints"])
async def test_debug_tasks_checkpoints_modes(client, mode):
    t = await client.threads.create()
    parts = await _events(client, t["thread_id"], input=human("m"), stream_mode=[mode])
    body = [p for p in parts if p.event != "metadata"]
    assert body and all(p.event == mode for p in body)
    if mode == "tasks":
        names = [p.data["name"] for p in body]
        assert names == ["prepare", "prepare", "respond", "respond"]
        assert "result" in body[-1].data
    elif mode == "checkpoints":
        assert {"config", "metadata", "values", "next"} <= set(body[-1].data)
        assert body[-1].data["next"] == []
    else:
        assert {p.data["type"] for p in body} >= {"checkpoint", "task", "task_result"}


async def test_events_mode(client):
    t = await client.threads.create()
    parts = await _events(
        client, t["thread_id"], input=human("e"), stream_mode=["events", "updates"]
    )
    events = [p.data for p in parts if p.event == "events"]
    kinds = {e["event"] for e in events}
    assert {"on_chain_start", "on_chain_end"} <= kinds
    assert any(p.event == "updates" for p in parts)


async def test_subgraph_namespaces(client):
    # `nested` runs a compiled subgraph as its node `inner`: its events carry `|inner:<id>`
    t = await client.threads.create()
    parts = [
        p
        async for p in client.runs.stream(
            t["thread_id"],
            "nested",
            input=human("n"),
            stream_mode=["updates"],
            stream_subgraphs=True,
        )
    ]
    names = [p.event for p in parts]
    assert "updates" in names
    assert any(n.startswith("updates|inner:") for n in names), names


def test_wire_format_matches_the_contract(server: InProcessServer):
    with server.http(timeout=30) as http:
        t = http.post(f"{server.api}/threads", json={}).json()
        resp, frames = read_events(
            http,
            "POST",
            f"{server.api}/threads/{t['thread_id']}/runs/stream",
            json={"assistant_id": "echo", "input": human("hi"), "stream_mode": "updates"},
        )
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert resp.headers["cache-control"] == "no-store"
    assert resp.headers["x-accel-buffering"] == "no"
    run_path = resp.headers["content-location"]
    # relative to the API root, as the reference server sends it (the SDKs prefix their apiUrl)
    assert run_path.startswith(f"/threads/{t['thread_id']}/runs/")
    assert resp.headers["location"] == run_path + "/stream"
    assert [f.event for f in frames] == ["metadata", "updates", "updates"]
    assert [f.id for f in frames] == ["1", "2", "3"]
    first = frames[0].data
    assert first is not None and first.startswith('{"run_id":"') and " " not in first


def test_heartbeat_comment(start_app):
    srv = start_app(streaming={"heartbeat_s": 0.3})
    with srv.http(timeout=30) as http, srv.http(timeout=30) as control:
        t = http.post(f"{srv.api}/threads", json={}).json()
        raw = b""
        cancelled = False
        with http.stream(
            "POST",
            f"{srv.api}/threads/{t['thread_id']}/runs/stream",
            json={
                "assistant_id": "echo",
                "input": {**human("slow"), "sleep": 600},
                "stream_mode": ["updates"],
            },
        ) as resp:
            run_path = resp.headers["content-location"]
            for chunk in resp.iter_raw():
                raw += chunk
                # A heartbeat after `prepare`'s update: the run is asleep in `respond`; it
                # is cancelled then, which ends the stream.
                text = raw.decode()
                update_at = text.find("event: updates")
                if not cancelled and update_at >= 0 and text.rfind(": heartbeat") > update_at:
                    assert control.post(f"{srv.api}{run_path}/cancel").is_success
                    cancelled = True
    assert cancelled
    items = parse_frames(raw)
    assert ": heartbeat" in items
    frames = [i for i in items if isinstance(i, Frame)]
    assert [f.event for f in frames] == ["metadata", "updates"]
    assert frames[1].data is not None and "prepare" in json.loads(frames[1].data)
    # heartbeats arrive while the run sleeps, after the update of its first step
    update_at = items.index(frames[1])
    assert ": heartbeat" in items[update_at + 1 :]
