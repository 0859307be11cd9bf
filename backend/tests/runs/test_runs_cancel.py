"""Cancel (interrupt / rollback, wait, idempotency) and multitask strategies."""

from __future__ import annotations

import httpx
import pytest
from langgraph_sdk.errors import ConflictError, NotFoundError

from runs.runkit import human, wait_next, wait_status
from support.inproc import InProcessServer


async def test_cancel_interrupt_keeps_progress(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(tid, "echo", input=human("first"))
    run = await client.runs.create(tid, "echo", input={**human("second"), "sleep": 5})
    await wait_status(client, tid, run["run_id"], {"running"})
    await wait_next(client, tid, ["respond"])  # `prepare` has checkpointed
    await client.runs.cancel(tid, run["run_id"], wait=True)
    run = await client.runs.get(tid, run["run_id"])
    assert run["status"] == "interrupted"
    thread = await client.threads.get(tid)
    assert thread["status"] in ("idle", "interrupted")
    state = await client.threads.get_state(tid)
    # the second human message made it into the state before the cancel
    assert [m["content"] for m in state["values"]["messages"]][-1] == "second"
    assert state["next"] == ["respond"]
    # idempotent
    await client.runs.cancel(tid, run["run_id"])
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "interrupted"


async def test_cancel_rollback_restores_pre_run_state(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(tid, "echo", input=human("keep"))
    before = await client.threads.get_state(tid)
    run = await client.runs.create(tid, "echo", input={**human("drop"), "sleep": 5})
    await wait_status(client, tid, run["run_id"], {"running"})
    await wait_next(client, tid, ["respond"])
    await client.runs.cancel(tid, run["run_id"], wait=True, action="rollback")
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, run["run_id"])
    after = await client.threads.get_state(tid)
    assert after["checkpoint"]["checkpoint_id"] == before["checkpoint"]["checkpoint_id"]
    assert after["values"] == before["values"]
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_cancel_finished_and_unknown(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    run = await client.runs.create(tid, "echo", input=human("x"))
    await client.runs.join(tid, run["run_id"])
    with pytest.raises(ConflictError):
        await client.runs.cancel(tid, run["run_id"])
    with pytest.raises(NotFoundError):
        await client.runs.cancel(tid, "00000000-0000-0000-0000-000000000000")


async def test_cancel_many_by_status(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    r1 = await client.runs.create(tid, "echo", input={**human("a"), "sleep": 5})
    r2 = await client.runs.create(tid, "echo", input=human("b"))  # queued behind r1
    await client.runs.cancel_many(thread_id=tid, run_ids=[r1["run_id"], r2["run_id"]])
    for r in (r1, r2):
        run = await wait_status(client, tid, r["run_id"], {"interrupted", "success"})
        assert run["status"] == "interrupted"


async def test_multitask_reject(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    r1 = await client.runs.create(tid, "echo", input={**human("a"), "sleep": 1})
    with pytest.raises(ConflictError):
        await client.runs.create(tid, "echo", input=human("b"), multitask_strategy="reject")
    assert (await client.runs.join(tid, r1["run_id"]))["last_echo"] == "a"


async def test_multitask_enqueue_is_default_and_ordered(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.create(tid, "echo", input={**human("a"), "sleep": 0.5})
    # The echo graph's knobs are state: without its own, b would sleep as long as a.
    r2 = await client.runs.create(tid, "echo", input={**human("b"), "sleep": 0})
    assert r2["multitask_strategy"] == "enqueue"
    assert (await client.runs.get(tid, r2["run_id"]))["status"] == "pending"
    assert (await client.threads.get(tid))["status"] == "busy"
    out = await client.runs.join(tid, r2["run_id"])
    assert [m["content"] for m in out["messages"]] == ["a", "echo: a", "b", "echo: b"]
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_multitask_interrupt(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    r1 = await client.runs.create(tid, "echo", input={**human("a"), "sleep": 5})
    await wait_status(client, tid, r1["run_id"], {"running"})
    await wait_next(client, tid, ["respond"])
    # `prepare` checkpointed a's `sleep: 5`: b's input sets its own (the knobs are state).
    r2 = await client.runs.create(
        tid, "echo", input={**human("b"), "sleep": 0}, multitask_strategy="interrupt"
    )
    out = await client.runs.join(tid, r2["run_id"])
    assert (await client.runs.get(tid, r1["run_id"]))["status"] == "interrupted"
    contents = [m["content"] for m in out["messages"]]
    assert contents[0] == "a" and contents[-1] == "echo: b"  # a's progress kept


async def test_multitask_rollback(client):
    t = await client.threads.create()
    tid = t["thread_id"]
    r1 = await client.runs.create(tid, "echo", input={**human("a"), "sleep": 5})
    await wait_status(client, tid, r1["run_id"], {"running"})
    await wait_next(client, tid, ["respond"])
    r2 = await client.runs.create(tid, "echo", input=human("b"), multitask_strategy="rollback")
    out = await client.runs.join(tid, r2["run_id"])
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, r1["run_id"])
    assert [m["content"] for m in out["messages"]] == ["b", "echo: b"]


def test_on_disconnect_cancel(server: InProcessServer):
    with server.http(timeout=30) as http:
        tid = http.post(f"{server.api}/threads", json={}).json()["thread_id"]
        with http.stream(
            "POST",
            f"{server.api}/threads/{tid}/runs/stream",
            json={
                "assistant_id": "echo",
                "input": {**human("d"), "sleep": 5},
                "on_disconnect": "cancel",
            },
        ) as resp:
            run_path = resp.headers["content-location"]
            next(resp.iter_raw())  # the metadata event, then hang up
        assert http.get(f"{server.api}{run_path}/join").status_code == 200  # the run ended
        assert http.get(f"{server.api}{run_path}").json()["status"] == "interrupted"


def test_wait_with_on_disconnect_cancel(server: InProcessServer):
    """A /wait client that goes away cancels the run when it asked for on_disconnect=cancel."""
    with server.http(timeout=30) as http:
        tid = http.post(f"{server.api}/threads", json={}).json()["thread_id"]
        with pytest.raises(httpx.ReadTimeout):
            http.post(
                f"{server.api}/threads/{tid}/runs/wait",
                json={
                    "assistant_id": "echo",
                    "input": {**human("w"), "sleep": 5},
                    "on_disconnect": "cancel",
                },
                timeout=httpx.Timeout(30, read=0.5),
            )
        [run] = http.get(f"{server.api}/threads/{tid}/runs").json()
        run_path = f"{server.api}/threads/{tid}/runs/{run['run_id']}"
        assert http.get(f"{run_path}/join").status_code == 200  # the run ended
        assert http.get(run_path).json()["status"] == "interrupted"
        # without on_disconnect the run continues after the client leaves
        with pytest.raises(httpx.ReadTimeout):
            http.post(
                f"{server.api}/threads/{tid}/runs/wait",
                json={"assistant_id": "echo", "input": {**human("c"), "sleep": 1}},
                timeout=httpx.Timeout(30, read=0.3),
            )
        latest = http.get(f"{server.api}/threads/{tid}/runs").json()[0]
        run_path = f"{server.api}/threads/{tid}/runs/{latest['run_id']}"
        assert latest["run_id"] != run["run_id"]
        assert http.get(f"{run_path}/join").status_code == 200
        assert http.get(run_path).json()["status"] == "success"


async def test_cancelling_a_running_and_a_queued_run_together_leaves_the_thread_free(client):
    """One bulk cancel interrupts a running run and the run queued behind it; their settles
    can land in one commit group. Whatever the order, the thread ends not busy — every time."""
    for _ in range(15):
        tid = (await client.threads.create())["thread_id"]
        running = await client.runs.create(tid, "echo", input={**human("a"), "sleep": 60})
        queued = await client.runs.create(tid, "echo", input=human("b"))
        await wait_status(client, tid, running["run_id"], {"running"})
        await client.runs.cancel_many(thread_id=tid, run_ids=[running["run_id"], queued["run_id"]])
        for rid in (running["run_id"], queued["run_id"]):
            await wait_status(client, tid, rid, {"interrupted"})
        # Each settle writes its run's status and the thread's in one unit: both runs have
        # ended, so the thread's status is final now.
        status = (await client.threads.get(tid))["status"]
        assert status in ("idle", "interrupted"), "the thread stayed busy after both runs ended"
