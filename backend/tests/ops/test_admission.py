"""Admission control: past each queue cap run creation answers 429 with Retry-After and
writes nothing; a run waiting past runs.max_queue_wait_s ends `error`; per-user request
rate limits. Runs are held `running` by the echo graph's sleep and cancelled at the end
(drain_timeout_s: 0), so no test waits for a clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from ops.users_auth import ALICE, BOB
from support.inproc import InProcessServer

API = "/api/langgraph"
CUSTOM_AUTH = {"mode": "custom", "custom": "ops.users_auth:auth"}


def held(text: str = "hold") -> dict[str, Any]:
    """Echo input that keeps its run `running` (until it is cancelled)."""
    return {"messages": [{"role": "user", "content": text}], "sleep": 600}


def new_thread(http: httpx.Client, headers: dict[str, str] | None = None) -> str:
    resp = http.post(f"{API}/threads", json={}, headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()["thread_id"]


def start_run(
    http: httpx.Client, tid: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return http.post(
        f"{API}/threads/{tid}/runs",
        json={"assistant_id": "echo", "input": held()},
        headers=headers,
    )


def wait_status(
    http: httpx.Client,
    tid: str,
    rid: str,
    wanted: str,
    headers: dict[str, str] | None = None,
    within: float = 60.0,
) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        run = http.get(f"{API}/threads/{tid}/runs/{rid}", headers=headers).json()
        if run["status"] == wanted:
            return run
        assert time.monotonic() < deadline, f"run stayed {run['status']}, wanted {wanted}"
        time.sleep(0.02)


def running(http: httpx.Client, tid: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    resp = start_run(http, tid, headers)
    assert resp.status_code == 200, resp.text
    return wait_status(http, tid, resp.json()["run_id"], "running", headers)


def runs_of(http: httpx.Client, tid: str, headers: dict[str, str] | None = None) -> list[Any]:
    resp = http.get(f"{API}/threads/{tid}/runs", headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()


def thread_count(http: httpx.Client, headers: dict[str, str] | None = None) -> int:
    resp = http.post(f"{API}/threads/search", json={"limit": 1000}, headers=headers)
    return len(resp.json())


def assert_overloaded(resp: httpx.Response, cap: str) -> None:
    assert resp.status_code == 429, resp.text
    assert int(resp.headers["Retry-After"]) >= 1
    assert cap in resp.json()["detail"]


def metric(http: httpx.Client, name: str, headers: dict[str, str] | None = None) -> str:
    text = http.get("/metrics", headers=headers).text
    return "\n".join(line for line in text.splitlines() if line.startswith(name))


Start = Callable[..., InProcessServer]


def test_global_queue_cap_refuses_and_persists_nothing(start_app: Start) -> None:
    app = start_app(runs={"max_concurrency": 1, "max_queued": 1, "drain_timeout_s": 0})
    with app.http() as http:
        first, second, third = new_thread(http), new_thread(http), new_thread(http)
        running(http, first)
        queued = start_run(http, second)
        assert queued.status_code == 200
        assert queued.json()["status"] == "pending"
        threads_before = thread_count(http)

        refused = start_run(http, third)
        assert_overloaded(refused, "runs.max_queued")
        assert runs_of(http, third) == []
        # a stateless run (a thread of its own) and /wait are refused the same way
        stateless = http.post(f"{API}/runs", json={"assistant_id": "echo", "input": held()})
        assert_overloaded(stateless, "runs.max_queued")
        waited = http.post(
            f"{API}/threads/{third}/runs/wait", json={"assistant_id": "echo", "input": held()}
        )
        assert_overloaded(waited, "runs.max_queued")
        assert thread_count(http) == threads_before
        assert runs_of(http, third) == []

        gauges = metric(http, "pronghorn_runs_")
        assert "pronghorn_runs_active 1.0" in gauges
        assert "pronghorn_runs_queued 1.0" in gauges
        assert 'pronghorn_runs_refused_total{reason="max_queued"} 3.0' in gauges


def test_a_busy_thread_queues_its_next_run(start_app: Start) -> None:
    """Waiting for the thread's turn is waiting too: with no queue, the second run of a
    busy thread is refused (and a run elsewhere, which starts at once, is not)."""
    app = start_app(runs={"max_queued": 0, "drain_timeout_s": 0})
    with app.http() as http:
        tid = new_thread(http)
        run = running(http, tid)
        assert_overloaded(start_run(http, tid), "runs.max_queued")
        assert [r["run_id"] for r in runs_of(http, tid)] == [run["run_id"]]
        other = new_thread(http)
        assert start_run(http, other).status_code == 200


def test_per_user_caps(start_app: Start) -> None:
    app = start_app(
        auth=CUSTOM_AUTH,
        runs={"max_concurrency_per_user": 1, "max_queued_per_user": 1, "drain_timeout_s": 0},
    )
    with app.http() as http:
        a1, a2, a3 = (new_thread(http, ALICE) for _ in range(3))
        running(http, a1, ALICE)
        # alice's second run waits for her own slot (the global ones are free) ...
        waiting = start_run(http, a2, ALICE)
        assert waiting.status_code == 200
        rid = waiting.json()["run_id"]
        assert http.get(f"{API}/threads/{a2}/runs/{rid}", headers=ALICE).json()["status"] == (
            "pending"
        )
        # ... her third finds her queue full ...
        assert_overloaded(start_run(http, a3, ALICE), "runs.max_queued_per_user")
        assert runs_of(http, a3, ALICE) == []
        # ... and bob is not held back by alice
        b1 = new_thread(http, BOB)
        running(http, b1, BOB)
        assert start_run(http, new_thread(http, BOB), BOB).status_code == 200


def test_per_user_concurrency_without_a_queue(start_app: Start) -> None:
    app = start_app(
        auth=CUSTOM_AUTH,
        runs={"max_concurrency_per_user": 1, "max_queued_per_user": 0, "drain_timeout_s": 0},
    )
    with app.http() as http:
        running(http, new_thread(http, ALICE), ALICE)
        tid = new_thread(http, ALICE)
        refused = start_run(http, tid, ALICE)
        assert_overloaded(refused, "runs.max_queued_per_user")
        assert "1 running" in refused.json()["detail"]
        assert runs_of(http, tid, ALICE) == []


def test_queue_wait_is_bounded(start_app: Start) -> None:
    app = start_app(runs={"max_concurrency": 1, "max_queue_wait_s": 0.3, "drain_timeout_s": 0})
    with app.http() as http:
        first, second = new_thread(http), new_thread(http)
        blocker = running(http, first)
        resp = start_run(http, second)
        assert resp.status_code == 200
        run = wait_status(http, second, resp.json()["run_id"], "error")
        assert run["status"] == "error"
        thread = http.get(f"{API}/threads/{second}").json()
        assert thread["status"] == "error"
        assert thread["error"]["error"] == "QueueTimeout"
        assert "runs.max_queue_wait_s" in thread["error"]["message"]
        # /join answers with the reason; the blocker was never disturbed
        joined = http.get(f"{API}/threads/{second}/runs/{resp.json()['run_id']}/join").json()
        assert joined["__error__"]["error"] == "QueueTimeout"
        current = http.get(f"{API}/threads/{first}/runs/{blocker['run_id']}").json()
        assert current["status"] == "running"
        assert "pronghorn_runs_queued 0.0" in metric(http, "pronghorn_runs_queued")
        assert 'pronghorn_runs_total{status="error"} 1.0' in metric(http, "pronghorn_runs_total")


def test_cancelled_while_queued_gives_its_place_back(start_app: Start) -> None:
    app = start_app(runs={"max_concurrency": 1, "max_queued": 1, "drain_timeout_s": 0})
    with app.http() as http:
        first, second, third = new_thread(http), new_thread(http), new_thread(http)
        running(http, first)
        rid = start_run(http, second).json()["run_id"]
        assert_overloaded(start_run(http, third), "runs.max_queued")
        cancel = http.post(f"{API}/threads/{second}/runs/{rid}/cancel?wait=true")
        assert cancel.status_code in (200, 202, 204), cancel.text
        wait_status(http, second, rid, "interrupted")
        assert start_run(http, third).status_code == 200


def test_request_rate_limit_per_user(start_app: Start) -> None:
    app = start_app(auth=CUSTOM_AUTH, rate_limits={"requests_per_second": 0.001, "burst": 3})
    with app.http() as http:
        for _ in range(3):
            assert http.post(f"{API}/threads/search", json={}, headers=ALICE).status_code == 200
        limited = http.post(f"{API}/threads", json={}, headers=ALICE)
        assert limited.status_code == 429
        assert int(limited.headers["Retry-After"]) >= 900  # one token per 1000 s
        assert "Too many requests" in limited.json()["detail"]
        # another user, and public probes, are not limited by alice's bucket
        assert http.post(f"{API}/threads/search", json={}, headers=BOB).status_code == 200
        assert http.get("/health").status_code == 200


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_queued", -1), ("max_concurrency_per_user", 0), ("max_queue_wait_s", 0)],
)
def test_bad_caps_are_config_errors(field: str, value: float) -> None:
    from pydantic import ValidationError

    from pronghorn.config.schema.app import RunsConfig

    with pytest.raises(ValidationError, match=field):
        RunsConfig.model_validate({field: value})


def test_a_batch_that_does_not_fit_creates_none(start_app: Start) -> None:
    app = start_app(runs={"max_concurrency": 1, "max_queued": 2, "drain_timeout_s": 0})
    with app.http() as http:
        running(http, new_thread(http))
        before = thread_count(http)
        batch = [{"assistant_id": "echo", "input": held()} for _ in range(3)]
        assert_overloaded(http.post(f"{API}/runs/batch", json=batch), "runs.max_queued")
        assert thread_count(http) == before
        fits = http.post(f"{API}/runs/batch", json=batch[:2])
        assert fits.status_code == 200, fits.text
        assert len(fits.json()) == 2


def test_rate_limit_store_down_lets_requests_through(start_app: Start) -> None:
    from support.live import free_port

    app = start_app(
        auth=CUSTOM_AUTH,
        broker={"redis_url": f"redis://127.0.0.1:{free_port()}/0"},  # nothing listens
        rate_limits={"requests_per_second": 0.001, "burst": 1, "backend": "redis"},
    )
    with app.http() as http:
        for _ in range(2):
            assert http.post(f"{API}/threads/search", json={}, headers=ALICE).status_code == 200
    assert "rate limit store unavailable" in app.logs()
