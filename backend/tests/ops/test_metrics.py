"""`GET /metrics`: exact values after known runs, histograms filled, labels free of ids,
model and tool series from a lead-agent run, SSE connections, config reloads, and who may
scrape (admin, token, own port)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from ops.users_auth import ALICE
from support.inproc import InProcessServer
from support.live import free_port

API = "/api/langgraph"
Start = Callable[..., InProcessServer]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
ID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)


def scrape(http: httpx.Client, **kwargs: Any) -> Samples:
    resp = http.get("/metrics", **kwargs)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/plain")
    return parse(resp.text)


def parse(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def echo(text: str, **knobs: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **knobs}


def wait_run(http: httpx.Client, tid: str, body: dict[str, Any]) -> httpx.Response:
    return http.post(f"{API}/threads/{tid}/runs/wait", json=body)


def test_run_and_http_series_after_known_runs(start_app: Start) -> None:
    app = start_app()
    ids: set[str] = set()
    with app.http() as http:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        ids.add(tid)
        for text in ("one", "two"):
            assert wait_run(http, tid, {"assistant_id": "echo", "input": echo(text)}).is_success
        failed = wait_run(http, tid, {"assistant_id": "echo", "input": echo("x", fail=True)})
        assert failed.status_code == 200
        for run in http.get(f"{API}/threads/{tid}/runs").json():
            ids.add(run["run_id"])
        assert http.get(f"{API}/threads/{tid}").status_code == 200
        assert http.get(f"{API}/threads/not-a-uuid").status_code in (404, 422)
        assert http.get("/no/such/page/" + tid).status_code in (200, 404)
        samples = scrape(http)

    assert value(samples, "pronghorn_runs_total", status="success") == 2
    assert value(samples, "pronghorn_runs_total", status="error") == 1
    assert value(samples, "pronghorn_runs_active") == 0
    assert value(samples, "pronghorn_runs_queued") == 0
    for hist in ("pronghorn_run_duration_seconds", "pronghorn_run_queue_wait_seconds"):
        assert value(samples, f"{hist}_count") == 3
        assert value(samples, f"{hist}_bucket", le="+Inf") == 3
        assert value(samples, f"{hist}_sum") > 0
    route = f"{API}/threads/{{thread_id}}/runs/wait"
    requests = "pronghorn_http_requests_total"
    assert value(samples, requests, route=route, method="POST", status="200") == 3
    assert value(samples, "pronghorn_http_request_duration_seconds_count", route=route) == 3
    assert (
        value(
            samples,
            "pronghorn_http_requests_total",
            route=f"{API}/threads/{{thread_id}}",
            method="GET",
            status="200",
        )
        == 1
    )
    # no label value anywhere carries an id: routes are templates
    routes = set()
    for name, labels in samples:
        for key, label in labels:
            assert not ID.search(label), (name, key, label)
            assert all(i not in label for i in ids), (name, key, label)
            if key == "route":
                routes.add(label)
    assert routes <= {"unmatched", "static"} | {r for r in routes if r.startswith("/")}
    assert "process_resident_memory_bytes" in {name for name, _ in samples}


RULES = [
    {
        "match": "tools please",
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "args": {
                            "description": "write",
                            "path": "/mnt/user-data/outputs/a.txt",
                            "content": "hi",
                        },
                    }
                ],
                "usage": {"input_tokens": 100, "output_tokens": 7},
            },
            {
                "tool_calls": [
                    {"name": "read_file", "args": {"description": "no", "path": "/etc/passwd"}}
                ],
                "usage": {"input_tokens": 120, "output_tokens": 5},
            },
            {"text": "Done.", "usage": {"input_tokens": 140, "output_tokens": 2}},
        ],
    }
]


def test_model_and_tool_series_of_a_lead_agent_run(start_app: Start) -> None:
    app = start_app(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
    )
    with app.http() as http:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        body = {"assistant_id": "lead_agent", "input": echo("tools please")}
        final = wait_run(http, tid, body).json()
        assert final["messages"][-1]["content"] == "Done."
        samples = scrape(http)
    assert value(samples, "pronghorn_llm_requests_total", model="s", status="ok") == 3
    assert value(samples, "pronghorn_llm_requests_total", model="s", status="error") == 0
    assert value(samples, "pronghorn_llm_tokens_total", model="s", kind="input") == 360
    assert value(samples, "pronghorn_llm_tokens_total", model="s", kind="output") == 14
    assert value(samples, "pronghorn_tool_calls_total", tool="write_file", status="ok") == 1
    assert value(samples, "pronghorn_tool_calls_total", tool="read_file", status="error") == 1
    assert value(samples, "pronghorn_runs_total", status="success") == 1


def test_sse_connections_gauge(start_app: Start, tmp_path: Path) -> None:
    app = start_app()
    gate = tmp_path / "gate"
    with app.http() as http, app.http() as other:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        run = http.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "echo", "input": echo("w", gate=str(gate))},
        ).json()
        with http.stream("GET", f"{API}/threads/{tid}/runs/{run['run_id']}/stream") as stream:
            assert stream.status_code == 200
            # The run waits at the gate, so its stream is still open.
            assert value(scrape(other), "pronghorn_sse_connections") == 1
            gate.touch()
            for _ in stream.iter_bytes():  # to its end: the run finished
                pass
        deadline = time.monotonic() + 60
        while value(scrape(other), "pronghorn_sse_connections") != 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)


def test_config_reloads_are_counted(start_app: Start) -> None:
    app = start_app()
    with app.http() as http:

        def reloads(result: str) -> float:
            return value(scrape(http), "pronghorn_config_reloads_total", result=result)

        def until(result: str, write: Callable[[], object]) -> None:
            """Write once (the app watches its file from startup on), then wait for it."""
            write()
            deadline = time.monotonic() + 60
            while reloads(result) < 1:
                assert time.monotonic() < deadline, f"no {result} reload"
                time.sleep(0.05)

        until("invalid", lambda: app.config_path.write_text("runs: {max_concurrency: nope}\n"))
        assert reloads("applied") == 0
        until("applied", lambda: app.write_config({**app.config, "runs": {"max_concurrency": 3}}))
        # the same valid file again changes nothing, and counts nothing
        app.write_config()
        assert http.get("/api/config/status").json()["last_error"] is None
        assert reloads("applied") == 1


def test_scrape_needs_an_admin_or_the_token(start_app: Start) -> None:
    app = start_app(auth={"mode": "custom", "custom": "ops.users_auth:auth"})
    with app.http() as http:
        assert http.get("/metrics").status_code == 401
        denied = http.get("/metrics", headers=ALICE)  # a user, not an admin
        assert denied.status_code == 403
        assert "metrics.token" in denied.json()["detail"]

    app = start_app(metrics={"token": "scrape-secret"})
    with app.http() as http:
        assert http.get("/metrics").status_code == 401  # even the local admin needs it
        assert http.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = http.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert ok.status_code == 200 and "pronghorn_runs_total" in ok.text
        assert "scrape-secret" not in http.get("/api/config/status").text


def test_metrics_on_their_own_port(start_app: Start) -> None:
    port = free_port()
    app = start_app(metrics={"port": port, "token": "t0k"})
    with app.http() as http:
        assert http.get("/metrics").status_code == 404
        assert http.get("/health").status_code == 200
    url = f"http://127.0.0.1:{port}/metrics"
    assert httpx.get(url, timeout=30).status_code == 401
    resp = httpx.get(url, headers={"Authorization": "Bearer t0k"}, timeout=30)
    assert resp.status_code == 200
    samples = parse(resp.text)
    requests = "pronghorn_http_requests_total"
    assert value(samples, requests, route="/health", method="GET", status="200") == 1
    app.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=30)


def test_metrics_can_be_turned_off(start_app: Start) -> None:
    app = start_app(metrics={"enabled": False})
    with app.http() as http:
        assert http.get("/metrics").status_code == 404


def test_unknown_metrics_keys_fail_loudly(start_app: Start, tmp_path: Any) -> None:
    from pronghorn.config.errors import ConfigError
    from pronghorn.config.loader import load_config

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"metrics": {"prot": 1}}))
    with pytest.raises(ConfigError, match=r"metrics\.prot"):
        load_config(path)


def test_each_app_counts_apart_and_the_global_registry_stays_empty(start_app: Start) -> None:
    from prometheus_client import REGISTRY

    busy, idle = start_app(), start_app()
    with busy.http() as http:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        assert wait_run(http, tid, {"assistant_id": "echo", "input": echo("a")}).is_success
        assert value(scrape(http), "pronghorn_runs_total", status="success") == 1
    with idle.http() as http:
        assert value(scrape(http), "pronghorn_runs_total", status="success") == 0
    assert not [m for m in REGISTRY.collect() if m.name.startswith("pronghorn_")]


def test_custom_app_routes_are_labelled_by_their_template(start_app: Start) -> None:
    app = start_app(http={"app": "testgraphs.custom_app:app"})
    with app.http() as http:
        assert http.post("/custom/items/7", json={"name": "seven"}).status_code == 200
        # A request is counted once its handler has returned, which may be just after the
        # client got the answer: scrape until it shows (each scrape is a request too).
        routes: set[str | None] = set()
        for _ in range(100):
            samples = scrape(http)
            routes = {dict(lb).get("route") for name, lb in samples if "http_requests" in name}
            if "/custom/items/{item_id}" in routes:
                break
    assert "/custom/items/{item_id}" in routes
    assert not any(r and "/7" in r for r in routes)
