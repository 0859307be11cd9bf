"""Idempotency-Key on the creating routes: a retry with the same key and body gets the first
request's result (one run, one thread, one assistant), another body is a 422 naming the
key, a failed request frees its key, and the key expires (issue 28, point 2)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from typing import Any

import httpx
import pytest

from runs.runkit import human
from support.inproc import InProcessServer
from support.sse import sse_events

API = "/api/langgraph"


def key() -> dict[str, str]:
    return {"Idempotency-Key": f"k-{uuid.uuid4()}"}


def new_thread(http: httpx.Client) -> str:
    return http.post(f"{API}/threads", json={}).json()["thread_id"]


def runs_of(http: httpx.Client, tid: str) -> list[dict[str, Any]]:
    resp = http.get(f"{API}/threads/{tid}/runs", params={"limit": 100})
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_same_key_same_body_returns_the_first_run(server: InProcessServer):
    with server.http() as http:
        tid = new_thread(http)
        body = {"assistant_id": "echo", "input": human("once")}
        headers = key()
        first = http.post(f"{API}/threads/{tid}/runs", json=body, headers=headers)
        assert first.status_code == 200, first.text
        assert "idempotent-replayed" not in first.headers
        # The same JSON with other key order and spacing is the same request.
        again = http.post(
            f"{API}/threads/{tid}/runs",
            content=json.dumps(dict(reversed(list(body.items()))), indent=2),
            headers={**headers, "Content-Type": "application/json"},
        )
        assert again.status_code == 200, again.text
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json()
        assert again.headers["content-location"] == first.headers["content-location"]
        http.get(f"{API}/threads/{tid}/runs/{first.json()['run_id']}/join")
        assert [r["run_id"] for r in runs_of(http, tid)] == [first.json()["run_id"]]


def test_same_key_other_body_is_a_422_naming_the_key(server: InProcessServer):
    with server.http() as http:
        tid = new_thread(http)
        headers = key()
        ok = http.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "echo", "input": human("a")},
            headers=headers,
        )
        assert ok.status_code == 200
        other = http.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "echo", "input": human("b")},
            headers=headers,
        )
        assert other.status_code == 422
        assert headers["Idempotency-Key"] in other.json()["detail"]
        # Another route with the key is another request too.
        elsewhere = http.post(f"{API}/threads", json={}, headers=headers)
        assert elsewhere.status_code == 422
        http.get(f"{API}/threads/{tid}/runs/{ok.json()['run_id']}/join")
        assert len(runs_of(http, tid)) == 1


def test_a_retried_stream_reattaches_to_the_original_run(server: InProcessServer):
    with server.http() as http:
        tid = new_thread(http)
        body = {"assistant_id": "echo", "input": human("s"), "stream_mode": ["values"]}
        headers = key()
        first = http.post(f"{API}/threads/{tid}/runs/stream", json=body, headers=headers)
        again = http.post(f"{API}/threads/{tid}/runs/stream", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers["idempotent-replayed"] == "true"
    ev1, ev2 = sse_events(first.text), sse_events(again.text)
    assert ev1[0][0] == "metadata"
    assert ev2 == ev1  # the whole original stream, from its first event
    with server.http() as http:
        assert [r["run_id"] for r in runs_of(http, tid)] == [ev1[0][1]["run_id"]]


def test_a_retried_wait_returns_the_original_output(server: InProcessServer):
    with server.http() as http:
        tid = new_thread(http)
        body = {"assistant_id": "echo", "input": human("w")}
        headers = key()
        first = http.post(f"{API}/threads/{tid}/runs/wait", json=body, headers=headers)
        again = http.post(f"{API}/threads/{tid}/runs/wait", json=body, headers=headers)
        assert first.status_code == again.status_code == 200, again.text
        assert first.json()["last_echo"] == "w"
        assert again.json() == first.json()
        assert len(runs_of(http, tid)) == 1


def test_stateless_routes_and_batch_replay(server: InProcessServer):
    with server.http() as http:
        headers = key()
        body = {"assistant_id": "echo", "input": human("sl"), "on_completion": "keep"}
        a = http.post(f"{API}/runs", json=body, headers=headers)
        b = http.post(f"{API}/runs", json=body, headers=headers)
        assert a.status_code == b.status_code == 200
        assert a.json()["run_id"] == b.json()["run_id"]
        # A stateless stream retried while its run is kept: the same run's events.
        headers = key()
        s1 = http.post(f"{API}/runs/stream", json=body, headers=headers)
        s2 = http.post(f"{API}/runs/stream", json=body, headers=headers)
        assert sse_events(s2.text) == sse_events(s1.text)
        headers = key()
        w1 = http.post(f"{API}/runs/wait", json=body, headers=headers)
        w2 = http.post(f"{API}/runs/wait", json=body, headers=headers)
        assert w1.json() == w2.json() and w1.json()["last_echo"] == "sl"
        headers = key()
        batch = [body, {**body, "input": human("sl2")}]
        b1 = http.post(f"{API}/runs/batch", json=batch, headers=headers)
        b2 = http.post(f"{API}/runs/batch", json=batch, headers=headers)
        assert b1.status_code == b2.status_code == 200
        assert [r["run_id"] for r in b1.json()] == [r["run_id"] for r in b2.json()]


def test_threads_and_assistants_are_created_once(server: InProcessServer):
    with server.http() as http:
        headers = key()
        t1 = http.post(f"{API}/threads", json={"metadata": {"k": 1}}, headers=headers)
        t2 = http.post(f"{API}/threads", json={"metadata": {"k": 1}}, headers=headers)
        assert t1.status_code == t2.status_code == 200
        assert t1.json()["thread_id"] == t2.json()["thread_id"]
        # An empty body is a request too.
        headers = key()
        e1 = http.post(f"{API}/threads", headers=headers)
        e2 = http.post(f"{API}/threads", headers=headers)
        assert e1.json()["thread_id"] == e2.json()["thread_id"]
        headers = key()
        name = f"idem-{uuid.uuid4()}"
        made = {"graph_id": "echo", "name": name}
        a1 = http.post(f"{API}/assistants", json=made, headers=headers)
        a2 = http.post(f"{API}/assistants", json=made, headers=headers)
        assert a1.status_code == a2.status_code == 200
        assert a1.json()["assistant_id"] == a2.json()["assistant_id"]
        found = http.post(f"{API}/assistants/search", json={"metadata": {}, "limit": 1000})
        assert [a["name"] for a in found.json()].count(name) == 1


def test_a_failed_request_frees_its_key(server: InProcessServer):
    with server.http() as http:
        tid = new_thread(http)
        headers = key()
        bad = http.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "no-such-graph", "input": human("x")},
            headers=headers,
        )
        assert bad.status_code == 404
        ok = http.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "echo", "input": human("x")},
            headers=headers,
        )
        assert ok.status_code == 200, ok.text
        assert "idempotent-replayed" not in ok.headers


def test_bad_keys_are_refused(server: InProcessServer):
    with server.http() as http:
        for bad in (b"x" * 256, "caf\u00e9".encode()):
            resp = http.post(f"{API}/threads", json={}, headers={b"Idempotency-Key": bad})
            assert resp.status_code == 422
            assert "Idempotency-Key" in resp.json()["detail"]


async def test_concurrent_duplicates_start_one_run(server: InProcessServer):
    async with server.ahttp() as http:
        tid = (await http.post(f"{API}/threads", json={})).json()["thread_id"]
        headers = key()
        body = {"assistant_id": "echo", "input": human("race")}
        answers = await asyncio.gather(
            *(http.post(f"{API}/threads/{tid}/runs", json=body, headers=headers) for _ in range(8))
        )
        assert {a.status_code for a in answers} == {200}
        assert len({a.json()["run_id"] for a in answers}) == 1
        assert sum(a.headers.get("idempotent-replayed") == "true" for a in answers) == 7
        await http.get(f"{API}/threads/{tid}/runs/{answers[0].json()['run_id']}/join")
        listed = (await http.get(f"{API}/threads/{tid}/runs")).json()
        assert len(listed) == 1


def _expire_all(app: InProcessServer) -> None:
    with sqlite3.connect(app.workdir / "data" / "pronghorn.db", timeout=10) as conn:
        conn.execute("UPDATE idempotency_keys SET expires_at = '2000-01-01 00:00:00.000000'")


@pytest.mark.parametrize("ttl", [0, 3600])
def test_an_expired_or_disabled_key_creates_again(start_app, ttl: float):
    app = start_app(runs={"idempotency_ttl_s": ttl})
    with app.http() as http:
        tid = new_thread(http)
        body = {"assistant_id": "echo", "input": human("e")}
        headers = key()
        first = http.post(f"{API}/threads/{tid}/runs", json=body, headers=headers).json()
        http.get(f"{API}/threads/{tid}/runs/{first['run_id']}/join")
        if ttl:
            _expire_all(app)
        second = http.post(f"{API}/threads/{tid}/runs", json=body, headers=headers).json()
        assert second["run_id"] != first["run_id"]
        http.get(f"{API}/threads/{tid}/runs/{second['run_id']}/join")
        assert len(runs_of(http, tid)) == 2


def test_keys_are_per_user(start_server):
    from api.conftest import api_key

    srv = start_server(auth={"mode": "local"})
    keys = [api_key(srv, "idem-a"), api_key(srv, "idem-b")]
    headers = key()
    made: list[str] = []
    for secret in keys:
        with httpx.Client(base_url=srv.url, headers={"X-Api-Key": secret}, timeout=60) as http:
            resp = http.post(f"{API}/threads", json={}, headers=headers)
            assert resp.status_code == 200, resp.text
            assert "idempotent-replayed" not in resp.headers
            made.append(resp.json()["thread_id"])
    assert made[0] != made[1]
