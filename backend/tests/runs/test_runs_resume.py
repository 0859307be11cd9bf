"""Resumption with Last-Event-ID, joining live and finished runs, the thread stream."""

from __future__ import annotations

import threading

import httpx

from runs.runkit import frame_id, human, read_events
from support.inproc import InProcessServer


def _create_stream_run(http: httpx.Client, api: str, thread_id: str, body: dict):
    return read_events(http, "POST", f"{api}/threads/{thread_id}/runs/stream", json=body)


def test_drop_and_resume_gets_exactly_the_rest(server: InProcessServer):
    body = {
        "assistant_id": "echo",
        "input": {**human("go"), "chunks": 40, "sleep": 0.8},
        "stream_mode": ["messages-tuple", "updates"],
    }
    with server.http(timeout=30) as http:
        tid = http.post(f"{server.api}/threads", json={}).json()["thread_id"]
        # Drop the connection after 6 events; the run keeps going (on_disconnect=continue).
        resp, head = read_events(
            http, "POST", f"{server.api}/threads/{tid}/runs/stream", json=body, limit=6
        )
        location = resp.headers["location"]
        assert [f.id for f in head] == [str(i) for i in range(1, 7)]
        _, rest = read_events(
            http, "GET", f"{server.api}{location}", headers={"Last-Event-ID": head[-1].id}
        )
        ids = [frame_id(f) for f in rest]
        assert ids == list(range(7, 7 + len(ids))), ids  # no gap, no duplicate
        _, full = read_events(
            http, "GET", f"{server.api}{location}", headers={"Last-Event-ID": "-1"}
        )
    assert [f.event for f in full] == [f.event for f in head + rest]
    assert [f.data for f in full] == [f.data for f in head + rest]
    text = "".join(
        __import__("json").loads(f.data)[0]["content"] for f in full if f.event == "messages"
    )
    assert text.startswith("t0 t1 t2") and "t39" in text


async def test_join_live_and_finished(client):
    t = await client.threads.create()
    run = await client.runs.create(
        t["thread_id"],
        "echo",
        input={**human("j"), "sleep": 0.5},
        stream_mode=["values", "updates"],
    )
    joined = [
        p async for p in client.runs.join_stream(t["thread_id"], run["run_id"], last_event_id="-1")
    ]
    assert joined[0].event == "metadata"
    assert joined[-1].event in ("values", "updates")
    result = await client.runs.join(t["thread_id"], run["run_id"])
    assert result["last_echo"] == "j"
    # finished: a full replay with -1, nothing without the header
    replay = [
        p async for p in client.runs.join_stream(t["thread_id"], run["run_id"], last_event_id="-1")
    ]
    assert [p.event for p in replay] == [p.event for p in joined]
    empty = [p async for p in client.runs.join_stream(t["thread_id"], run["run_id"])]
    assert empty == []
    # filtered replay
    only = [
        p
        async for p in client.runs.join_stream(
            t["thread_id"], run["run_id"], last_event_id="-1", stream_mode="updates"
        )
    ]
    assert {p.event for p in only} == {"metadata", "updates"}


def test_thread_stream_sees_runs_and_lifecycle(server: InProcessServer):
    with server.http(timeout=30) as http:
        tid = http.post(f"{server.api}/threads", json={}).json()["thread_id"]
        got: list = []

        def listen() -> None:
            with server.http(timeout=30) as h2:
                _, frames = read_events(
                    h2,
                    "GET",
                    f"{server.api}/threads/{tid}/stream",
                    limit=4,
                    headers={"Last-Event-ID": "-"},
                )
                got.extend(frames)

        th = threading.Thread(target=listen)
        th.start()
        out = http.post(
            f"{server.api}/threads/{tid}/runs/wait",
            json={"assistant_id": "echo", "input": human("ts"), "stream_mode": ["updates"]},
        )
        assert out.status_code == 200
        th.join(20)
        assert not th.is_alive()
    names = [f.event for f in got]
    assert names[:3] == ["metadata", "updates", "updates"]
    assert names[3] == "metadata" and '"run_done"' in got[3].data
    with server.http() as http:
        bad = http.get(f"{server.api}/threads/{tid}/stream", headers={"Last-Event-ID": "x-y"})
    assert bad.status_code == 422
