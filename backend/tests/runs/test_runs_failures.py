"""Failures: graph errors, timeouts, validation, the concurrency cap.

Webhooks (delivery, retries, refused targets) are in tests/security/test_webhook_ssrf.py."""

from __future__ import annotations

import pytest
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from runs.runkit import human, wait_status
from support.inproc import InProcessServer


async def test_failing_graph_gives_error_event_and_status(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    parts = [
        p
        async for p in client.runs.stream(
            tid, "echo", input={**human("f"), "fail": True}, stream_mode="updates"
        )
    ]
    assert parts[-1].event == "error"
    assert parts[-1].data == {"error": "ValueError", "message": "echo: requested failure"}
    runs = await client.runs.list(tid)
    assert runs[0]["status"] == "error"
    thread = await client.threads.get(tid)
    assert thread["status"] == "error"
    assert thread["error"]["error"] == "ValueError"
    with pytest.raises(Exception, match="ValueError"):
        await client.runs.wait(tid, "echo", input={**human("f"), "fail": True})
    out = await client.runs.wait(tid, "echo", input={**human("f"), "fail": True}, raise_error=False)
    assert out == {"__error__": {"error": "ValueError", "message": "echo: requested failure"}}
    # the next good run resets the thread
    await client.runs.wait(tid, "echo", input={**human("ok"), "fail": False})
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_bad_requests(client, server: InProcessServer):
    t = await client.threads.create()
    tid = t["thread_id"]
    with pytest.raises(NotFoundError):
        await client.runs.create(tid, "no-such-graph", input={})
    with pytest.raises(NotFoundError):
        await client.runs.create("00000000-0000-0000-0000-000000000001", "echo", input={})
    with pytest.raises(UnprocessableEntityError):
        await client.runs.create(tid, "echo", input={}, stream_mode="bogus")
    async with server.ahttp() as http:
        r = await http.post(f"{server.api}/threads/not-a-uuid/runs", json={"assistant_id": "echo"})
        assert r.status_code == 422 and r.json()["detail"] == "Invalid thread ID: must be a UUID"
        r = await http.post(f"{server.api}/threads/{tid}/runs", json={"input": {}})
        assert r.status_code == 422 and "assistant_id" in r.json()["detail"]
        r = await http.post(f"{server.api}/threads/{tid}/runs", content=b"{nope")
        assert r.status_code == 422
    # nothing ran on the thread because of those
    assert await client.runs.list(tid) == []
    # if_not_exists=create makes the thread
    new_tid = "5f0e9f3e-3c55-4a55-8f1d-0c1d8c5e2a11"
    out = await client.runs.wait(new_tid, "echo", input=human("new"), if_not_exists="create")
    assert out["last_echo"] == "new"


async def test_timeout(start_app):
    srv = start_app(runs={"timeout_s": 0.5})
    client = srv.sdk()
    t = await client.threads.create()
    parts = [
        p
        async for p in client.runs.stream(
            t["thread_id"], "echo", input={**human("slow"), "sleep": 5}
        )
    ]
    assert parts[-1].event == "error" and parts[-1].data["error"] == "TimeoutError"
    run = (await client.runs.list(t["thread_id"]))[0]
    assert run["status"] == "timeout"
    assert (await client.threads.get(t["thread_id"]))["status"] == "error"


async def test_concurrency_cap_queues_fifo(start_app):
    srv = start_app(runs={"max_concurrency": 1})
    client = srv.sdk()
    threads = [await client.threads.create() for _ in range(3)]
    runs = [
        await client.runs.create(t["thread_id"], "echo", input={**human(str(i)), "sleep": 0.6})
        for i, t in enumerate(threads)
    ]
    await wait_status(client, runs[0]["thread_id"], runs[0]["run_id"], {"running"})
    statuses = [(await client.runs.get(r["thread_id"], r["run_id"]))["status"] for r in runs]
    assert statuses == ["running", "pending", "pending"]
    for r in runs:
        await client.runs.join(r["thread_id"], r["run_id"])
    done = [await client.runs.get(r["thread_id"], r["run_id"]) for r in runs]
    assert [d["status"] for d in done] == ["success"] * 3
    ends = [d["ended_at"] for d in done]
    assert ends == sorted(ends)  # FIFO
