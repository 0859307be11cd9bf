"""PostgreSQL going away under a replica (a TCP proxy between them is stopped, then started
again): requests get clear 503s with `Retry-After`, the process stays up (`/health`), a run
that ends while the database is away records its outcome once it is back (its real one
within `runs.settle_wait_s`, `error` past it; never left `running`), on one replica and in
cluster mode (PostgreSQL + Redis), and everything works again — without a restart."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from runs.backends import PG_URL
from scaleout.conftest import GRAPHS, ThreadedProxy
from scaleout.sse_kit import chatty, event_id, frames_of, wait_status
from support.inproc import InProcessServer
from support.live import base_config
from support.redis_kit import REDIS_URL, drop_prefix, new_prefix, require_redis

API = "/api/langgraph"

pytestmark = pytest.mark.skipif(not PG_URL, reason="PRONGHORN_TEST_POSTGRES_URL is not set")


@pytest.fixture
def pg_proxy(shared_db: dict[str, Any]) -> Iterator[tuple[ThreadedProxy, str]]:
    """A proxy in front of the test's fresh PostgreSQL database, and the URL through it."""
    target = shared_db["url"]
    proxy = ThreadedProxy(target)
    proxy.start()
    url = make_url(target).set(host="127.0.0.1", port=proxy.proxy.port)
    yield proxy, url.render_as_string(hide_password=False)
    proxy.close()


def _gateway(tmp_path: Path, url: str, *, cluster: bool = False, **runs: Any) -> InProcessServer:
    """A gateway through the proxy; `cluster`: with the Redis broker (scale-out mode)."""
    extra: dict[str, Any] = {}
    if cluster:
        require_redis()
        extra["broker"] = {"kind": "redis", "redis_url": REDIS_URL, "key_prefix": new_prefix()}
    app = InProcessServer(
        tmp_path / "gw",
        # A short wait for a pooled connection: a step that needs the database while it is
        # away fails in 2 s instead of 30 (what each test waits through).
        base_config(
            graphs=GRAPHS,
            database={"url": url, "pool_size": 4, "pool_timeout_s": 2},
            runs=runs,
            **extra,
        ),
    )
    return app.start()


@pytest.fixture
def gateway(tmp_path: Path, pg_proxy: tuple[ThreadedProxy, str]) -> Iterator[InProcessServer]:
    app = _gateway(tmp_path, pg_proxy[1])
    yield app
    app.stop()


@pytest.fixture(params=["single", "cluster"])
def gateways(
    request: pytest.FixtureRequest, tmp_path: Path, pg_proxy: tuple[ThreadedProxy, str]
) -> Iterator[Callable[..., InProcessServer]]:
    """`gateways(**runs)`: a gateway through the proxy with these `runs` settings, on one
    replica (memory broker) or in cluster mode (Redis broker, runs queued in the database)."""
    apps: list[InProcessServer] = []

    def start(**runs: Any) -> InProcessServer:
        app = _gateway(tmp_path, pg_proxy[1], cluster=request.param == "cluster", **runs)
        apps.append(app)
        return app

    yield start
    for app in apps:
        app.stop()
        prefix = app.config.get("broker", {}).get("key_prefix")
        if prefix:
            asyncio.run(drop_prefix(prefix))


def _wait_log(app: InProcessServer, needle: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while needle not in app.logs():
        assert time.monotonic() < deadline, _log_lines(app)
        time.sleep(0.05)


def _log_lines(app: InProcessServer) -> str:
    """The app's log lines without tracebacks (what an assertion shows)."""
    return "\n".join(line for line in app.logs().splitlines() if not line.startswith(" "))[-4000:]


def _is_503(resp) -> bool:
    return (
        resp.status_code == 503
        and "database" in resp.json()["detail"].lower()
        and int(resp.headers["Retry-After"]) >= 1
    )


def test_requests_get_503_while_the_database_is_away_then_recover(gateway, pg_proxy):
    proxy, _ = pg_proxy
    with gateway.http() as client:
        tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
        proxy.stop()
        assert client.get("/health").status_code == 200  # the process is fine
        ready = client.get("/ready")
        assert ready.status_code == 503 and ready.json()["checks"]["database"] is False
        for resp in (
            client.get(f"{API}/threads/{tid}"),
            client.post(f"{API}/threads", json={}),
            client.post(f"{API}/threads/search", json={}),
            client.post(f"{API}/threads/{tid}/runs", json={"assistant_id": "echo", "input": {}}),
        ):
            assert _is_503(resp), (resp.status_code, resp.text)
        proxy.start()
        # Back: the pool's stale connections are replaced, no restart needed.
        assert client.get("/ready").status_code == 200
        assert client.get(f"{API}/threads/{tid}").status_code == 200
        run = client.post(
            f"{API}/threads/{tid}/runs/wait",
            json={
                "assistant_id": "echo",
                "input": {"messages": [{"role": "user", "content": "hi"}]},
            },
        )
        assert run.status_code == 200 and "echo: hi" in run.text


def _ready(client) -> dict[str, Any]:
    return client.get("/ready").json()


def _wait_until(what: str, check: Callable[[], bool], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def _start_gated_run(client, gate: Path) -> tuple[str, str]:
    tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
    rid = client.post(
        f"{API}/threads/{tid}/runs",
        json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
    ).json()["run_id"]
    # At its gate: its graph started (read its checkpoint) and sent its first events.
    url = f"{API}/threads/{tid}/runs/{rid}/stream"
    status, frames = frames_of(client, url, last_event_id="-1", until=lambda b: len(b) >= 4)
    assert status == 200 and len(frames) == 4, frames
    return tid, rid


def _events(client, tid: str, rid: str) -> list[dict[str, Any]]:
    """The run's stored events, replayed from the database (after the run ended)."""
    status, frames = frames_of(client, f"{API}/threads/{tid}/runs/{rid}/stream", last_event_id="-1")
    assert status == 200, frames
    out = []
    for frame in frames:
        lines = dict(line.split(b": ", 1) for line in frame.split(b"\r\n") if b": " in line)
        out.append({"id": event_id(frame), "event": lines[b"event"].decode()})
        if b"data" in lines:
            out[-1]["data"] = json.loads(lines[b"data"])
    return out


def _takes_new_runs(client, tid: str) -> None:
    again = client.post(
        f"{API}/threads/{tid}/runs/wait",
        json={"assistant_id": "echo", "input": {"messages": [{"role": "user", "content": "x"}]}},
    )
    assert again.status_code == 200 and "echo: x" in again.text, again.text


def test_a_run_that_ends_while_the_database_is_away_settles_success_once_it_is_back(
    gateways, pg_proxy, tmp_path
):
    proxy, _ = pg_proxy
    app = gateways()
    gate = tmp_path / "gate"
    with app.http() as client:
        tid, rid = _start_gated_run(client, gate)
        proxy.stop()
        gate.write_text("go")  # the run goes on while the database is away, and ends
        # Its last writes wait for the database (its checkpoint, its settle), and say so.
        _wait_until("a run's write waits", lambda: _ready(client)["settles_waiting"] >= 1)
        assert client.get(f"{API}/threads/{tid}/runs/{rid}").status_code == 503
        proxy.start()
        run = wait_status(client, tid, rid, {"success", "error", "interrupted", "timeout"})
        assert run["status"] == "success", (run, app.logs()[-3000:])
        thread = client.get(f"{API}/threads/{tid}").json()
        assert thread["status"] == "idle", thread
        assert thread["values"]["emitted"] == 6, thread
        # Every event, the ones published while the database was away included, in order.
        events = _events(client, tid, rid)
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))
        custom = [e["data"]["i"] for e in events if e["event"] == "custom"]
        assert custom == list(range(6)), events
        assert not any(e["event"] == "error" for e in events), events
        assert _ready(client)["settles_waiting"] == 0
        _takes_new_runs(client, tid)
    # One line per outage from each loop that met it, not a traceback per try.
    logs = app.logs()
    assert "run task failed" not in logs, logs[-3000:]
    assert logs.count("settling a run waits") <= 1, logs[-3000:]
    assert logs.count("storing run events waits") <= 1, logs[-3000:]


def test_past_the_settle_wait_a_run_settles_error_once_the_database_is_back(
    gateways, pg_proxy, tmp_path
):
    proxy, _ = pg_proxy
    app = gateways(settle_wait_s=1)
    gate = tmp_path / "gate"
    with app.http() as client:
        tid, rid = _start_gated_run(client, gate)
        proxy.stop()
        gate.write_text("go")
        # The run gives up on its outcome after runs.settle_wait_s, and waits to write
        # `error` (still counted as waiting, in /ready and the gauge).
        _wait_log(app, "run failed: The database was unreachable for more than 1s", timeout=90)
        _wait_until("the error settle waits", lambda: _ready(client)["settles_waiting"] >= 1)
        metrics = client.get("/metrics").text
        assert "pronghorn_run_settles_waiting 0.0" not in metrics
        assert "pronghorn_run_settles_waiting " in metrics
        proxy.start()
        run = wait_status(client, tid, rid, {"success", "error", "interrupted", "timeout"})
        assert run["status"] == "error", run
        joined = client.get(f"{API}/threads/{tid}/runs/{rid}/join")
        assert joined.status_code == 200 and "DatabaseUnavailable" in joined.text, joined.text
        thread = client.get(f"{API}/threads/{tid}").json()
        assert thread["status"] == "error", thread  # not `busy`: it takes new runs
        assert thread["error"]["error"] == "DatabaseUnavailable", thread
        events = _events(client, tid, rid)
        assert events[-1]["event"] == "error", events
        assert events[-1]["data"]["error"] == "DatabaseUnavailable", events
        assert _ready(client)["settles_waiting"] == 0
        assert "pronghorn_run_settles_waiting 0.0" in client.get("/metrics").text
        _takes_new_runs(client, tid)
    assert "run task failed" not in app.logs(), app.logs()[-3000:]


def test_shutdown_ends_a_settle_that_waits_and_the_next_start_recovers_the_run(
    gateways, pg_proxy, tmp_path
):
    proxy, _ = pg_proxy
    app = gateways(drain_timeout_s=1)
    gate = tmp_path / "gate"
    with app.http() as client:
        tid, rid = _start_gated_run(client, gate)
        proxy.stop()
        gate.write_text("go")
        _wait_until("a run's write waits", lambda: _ready(client)["settles_waiting"] >= 1)
    app.stop()  # the wait ends (InProcessServer.stop fails if the app does not stop in 60 s)
    assert "shutdown ends a run's wait for the database" in app.logs(), _log_lines(app)
    proxy.start()
    app.start()  # the same database: the run left `running` is recovered (runs.recover)
    with app.http() as client:
        run = wait_status(client, tid, rid, {"success", "error", "interrupted", "timeout"})
        assert run["status"] == "error", run
        thread = client.get(f"{API}/threads/{tid}").json()
        assert thread["status"] != "busy", thread
        _takes_new_runs(client, tid)
