"""The answer of /runs/wait and /join: one JSON body with a Content-Length when the run ends
within the first heartbeat; a stream of heartbeat newlines, then the values, otherwise."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from runs.runkit import human
from support.live import LiveServer


def read_streamed(
    srv: LiveServer, method: str, path: str, body: Any, heard: threading.Event
) -> tuple[httpx.Headers, bytes]:
    """An answer read as it streams: `heard` is set once its first bytes (a heartbeat
    newline while the run waits) have come; then the rest until the body ends."""
    with (
        httpx.Client(base_url=srv.api, timeout=30) as http,
        http.stream(method, path, json=body) as resp,
    ):
        assert resp.status_code == 200
        chunks = resp.iter_raw()
        first = next(chunks)
        heard.set()
        return resp.headers, first + b"".join(chunks)


def test_wait_answers_a_quick_run_with_one_sized_body_and_a_slow_one_with_heartbeats(
    start_server,
):
    # 2 s: far above a warm echo run even on a loaded machine (the quick run must end within it)
    srv = start_server(streaming={"heartbeat_s": 2})
    with httpx.Client(base_url=srv.api, timeout=30) as http:
        tid = http.post("/threads", json={}).json()["thread_id"]
        warm = {"assistant_id": "echo", "input": human("warm up")}
        assert http.post(f"/threads/{tid}/runs/wait", json=warm).status_code == 200
        quick = http.post(
            f"/threads/{tid}/runs/wait", json={"assistant_id": "echo", "input": human("hi")}
        )
        assert quick.status_code == 200
        assert quick.headers["content-type"] == "application/json"
        assert int(quick.headers["content-length"]) == len(quick.content)
        assert "transfer-encoding" not in quick.headers
        assert quick.headers["location"].endswith("/join")
        assert quick.json()["messages"][-1]["content"] == "echo: hi"

        # Slow runs, one per thread: each queued behind a blocker that is cancelled once both
        # answers have sent a heartbeat, so each waits one heartbeat, not a guessed sleep.
        # They set `sleep: 0`: a blocker's `prepare` checkpoints its knob on the thread.
        blockers = []
        join_tid = http.post("/threads", json={}).json()["thread_id"]
        for thread_id in (tid, join_tid):
            blockers.append(
                http.post(
                    f"/threads/{thread_id}/runs",
                    json={"assistant_id": "echo", "input": {**human("block"), "sleep": 600}},
                ).json()
            )
        run = http.post(
            f"/threads/{join_tid}/runs",
            json={"assistant_id": "echo", "input": {**human("joined"), "sleep": 0}},
        ).json()
        waited, joined = threading.Event(), threading.Event()
        with ThreadPoolExecutor(2) as pool:
            slow_answer = pool.submit(
                read_streamed,
                srv,
                "POST",
                f"/threads/{tid}/runs/wait",
                {"assistant_id": "echo", "input": {**human("slow"), "sleep": 0}},
                waited,
            )
            join_path = f"/threads/{join_tid}/runs/{run['run_id']}/join"
            join_answer = pool.submit(read_streamed, srv, "GET", join_path, None, joined)
            assert waited.wait(60) and joined.wait(60)
            for blocker in blockers:
                cancel = http.post(
                    f"/threads/{blocker['thread_id']}/runs/{blocker['run_id']}/cancel"
                )
                assert cancel.is_success
            slow_headers, slow = slow_answer.result(timeout=60)
            _, joined_body = join_answer.result(timeout=60)

        assert slow_headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in slow_headers
        assert slow.startswith(b"\n")  # at least one heartbeat before the values
        assert json.loads(slow)["messages"][-1]["content"] == "echo: slow"

        # join of a run still going: the same answer shape (streamed), then the values
        assert joined_body.startswith(b"\n")
        assert json.loads(joined_body)["messages"][-1]["content"] == "echo: joined"
        # and of a finished one: a plain JSON answer
        again = http.get(join_path)
        assert int(again.headers["content-length"]) == len(again.content)
        assert again.json() == json.loads(joined_body)
