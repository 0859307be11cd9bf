"""Stateless runs (`/runs`, `/runs/stream`, `/runs/wait`, `/runs/batch`)."""

from __future__ import annotations

import asyncio

import pytest
from langgraph_sdk.errors import NotFoundError

from runs.runkit import human


async def test_stateless_wait_and_stream(client):
    out = await client.runs.wait(None, "echo", input=human("sl"))
    assert out["last_echo"] == "sl"
    parts = [
        p async for p in client.runs.stream(None, "echo", input=human("ss"), stream_mode="updates")
    ]
    assert [p.event for p in parts] == ["metadata", "updates", "updates"]


async def test_stateless_thread_is_deleted_unless_kept(client):
    run = await client.runs.create(None, "echo", input=human("tmp"))
    tid = run["thread_id"]
    for _ in range(600):
        try:
            await client.threads.get(tid)
        except NotFoundError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("temporary thread was not deleted")
    kept = await client.runs.create(None, "echo", input=human("keep"), on_completion="keep")
    await client.runs.join(kept["thread_id"], kept["run_id"])
    assert (await client.threads.get(kept["thread_id"]))["values"]["last_echo"] == "keep"


async def test_batch(client):
    runs = await client.runs.create_batch(
        [
            {"assistant_id": "echo", "input": human("b1")},
            {"assistant_id": "echo", "input": human("b2"), "on_completion": "keep"},
        ]
    )
    assert len(runs) == 2 and all(r["status"] == "pending" for r in runs)
    out = await client.runs.join(runs[1]["thread_id"], runs[1]["run_id"])
    assert out["last_echo"] == "b2"


async def test_batch_with_one_bad_run_creates_none(server):
    """Every run of a batch is checked before any is created: no partial batch."""

    bad_runs = [
        {"assistant_id": "lead_agent", "input": {"messages": [{"role": "wizard", "content": 1}]}},
        {"assistant_id": "no-such-assistant", "input": human("x")},
        {"assistant_id": "echo", "input": human("x"), "webhook": "http://127.0.0.1:9/h"},
    ]
    async with server.ahttp(base_url=server.api, timeout=30) as http:
        before = (await http.post("/threads/count", json={})).json()
        for bad in bad_runs:
            first = {"assistant_id": "echo", "input": human("first"), "on_completion": "keep"}
            body = [first, bad]
            r = await http.post("/runs/batch", json=body)
            assert 400 <= r.status_code < 500, r.text
            assert r.json()["detail"]
        # each stateless run makes a thread (kept here): none was made
        assert (await http.post("/threads/count", json={})).json() == before
