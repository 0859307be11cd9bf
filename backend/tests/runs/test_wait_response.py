"""The answer of /runs/wait and /join: one JSON body with a Content-Length when the run ends
within the first heartbeat; a stream of heartbeat newlines, then the values, otherwise."""

from __future__ import annotations

import json

import httpx

from runs.runkit import human


def test_wait_answers_a_quick_run_with_one_sized_body_and_a_slow_one_with_heartbeats(
    start_server,
):
    # 2 s: far above a warm echo run even on a loaded machine, and a short wait for the slow one
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

        slow = http.post(
            f"/threads/{tid}/runs/wait",
            json={"assistant_id": "echo", "input": {**human("slow"), "sleep": 2.5}},
        )
        assert slow.status_code == 200
        assert slow.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in slow.headers
        assert slow.content.startswith(b"\n")  # at least one heartbeat before the values
        assert json.loads(slow.content)["messages"][-1]["content"] == "echo: slow"

        # join of a run still going: the same answer shape (streamed), then the values
        run = http.post(
            f"/threads/{tid}/runs",
            json={"assistant_id": "echo", "input": {**human("joined"), "sleep": 2.5}},
        ).json()
        joined = http.get(f"/threads/{tid}/runs/{run['run_id']}/join")
        assert joined.status_code == 200
        assert joined.content.startswith(b"\n")
        assert json.loads(joined.content)["messages"][-1]["content"] == "echo: joined"
        # and of a finished one: a plain JSON answer
        again = http.get(f"/threads/{tid}/runs/{run['run_id']}/join")
        assert int(again.headers["content-length"]) == len(again.content)
        assert again.json() == json.loads(joined.content)
