"""The in-process harness itself (support/inproc.py, support/asgi_bridge.py): responses are
streamed, not buffered; a client leaving is a disconnect the app sees; read timeouts work."""

from __future__ import annotations

import httpx
import pytest

from runs.runkit import human, wait_status
from support.inproc import InProcessServer


async def test_sse_frames_arrive_while_the_run_is_still_going(server: InProcessServer) -> None:
    client = server.sdk(timeout=30)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    body = {"assistant_id": "echo", "input": {**human("slow"), "sleep": 30}}
    async with (
        server.ahttp() as http,
        http.stream("POST", f"{server.api}/threads/{tid}/runs/stream", json=body) as resp,
    ):
        first = await anext(resp.aiter_raw())  # a buffering transport would block here
        assert first.startswith(b"event: metadata")
        [run] = await client.runs.list(tid)
        assert run["status"] in ("pending", "running")
        with pytest.raises(httpx.ReadTimeout):  # the run sleeps 30 s: httpx's timeout fires
            await http.get(
                f"{server.api}/threads/{tid}/runs/{run['run_id']}/join",
                timeout=httpx.Timeout(30, read=0.05),
            )
    await client.runs.cancel(tid, run["run_id"])
    await wait_status(client, tid, run["run_id"], {"interrupted"})


def test_a_sync_client_leaving_is_a_disconnect(server: InProcessServer) -> None:
    with server.http() as http:
        tid = http.post(f"{server.api}/threads", json={}).json()["thread_id"]
        body = {
            "assistant_id": "echo",
            "input": {**human("slow"), "sleep": 30},
            "on_disconnect": "cancel",
        }
        with http.stream("POST", f"{server.api}/threads/{tid}/runs/stream", json=body) as r:
            next(r.iter_raw())
            run_path = r.headers["content-location"]
        # closing the response told the app: the run is cancelled (on_disconnect=cancel)
        http.get(f"{server.api}{run_path}/join", timeout=60).raise_for_status()
        assert http.get(f"{server.api}{run_path}").json()["status"] == "interrupted"


def test_raw_request_targets_are_not_normalised(server: InProcessServer) -> None:
    status, body = server.raw_get("/api/threads/x/artifacts/outputs/../../../etc/passwd")
    assert status in (400, 404, 422) and b"root:" not in body
    status, _ = server.raw_get("/health")
    assert status == 200
