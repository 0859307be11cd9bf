"""PostgreSQL going away under a replica (a TCP proxy between them is stopped, then started
again): requests get clear 503s with `Retry-After`, the process stays up (`/health`), a run
in flight does not stay `running` for good, and everything works again once the database
is back — without a restart."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from runs.backends import PG_URL
from scaleout.conftest import GRAPHS, ThreadedProxy
from scaleout.sse_kit import chatty, wait_status
from support.inproc import InProcessServer
from support.live import base_config

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


@pytest.fixture
def gateway(tmp_path: Path, pg_proxy: tuple[ThreadedProxy, str]) -> Iterator[InProcessServer]:
    _, url = pg_proxy
    app = InProcessServer(
        tmp_path / "gw",
        # A short wait for a pooled connection: a step that needs the database while it is
        # away fails in 2 s instead of 30 (what each test waits through).
        base_config(graphs=GRAPHS, database={"url": url, "pool_size": 4, "pool_timeout_s": 2}),
    )
    app.start()
    yield app
    app.stop()


def _wait_log(app: InProcessServer, needle: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while needle not in app.logs():
        assert time.monotonic() < deadline, app.logs()[-3000:]
        time.sleep(0.05)


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


def test_a_run_in_flight_during_an_outage_does_not_stay_running(gateway, pg_proxy, tmp_path):
    proxy, _ = pg_proxy
    gate = tmp_path / "gate"
    with gateway.http() as client:
        tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
        rid = client.post(
            f"{API}/threads/{tid}/runs", json={"assistant_id": "chatty", "input": chatty(gate)}
        ).json()["run_id"]
        wait_status(client, tid, rid, {"running"})
        proxy.stop()
        gate.write_text("go")  # the run goes on while the database is away, and ends
        # Its settle found the database away and waits for it: bring the database back.
        _wait_log(gateway, "settling a run waits: the database is unreachable")
        assert client.get(f"{API}/threads/{tid}/runs/{rid}").status_code == 503
        proxy.start()
        run = wait_status(client, tid, rid, {"success", "error"})
        thread = client.get(f"{API}/threads/{tid}").json()
        assert thread["status"] in ("idle", "error"), thread
        if run["status"] == "error":  # its writes failed: it says so, nothing hangs
            assert client.get(f"{API}/threads/{tid}/runs/{rid}/join").status_code == 200
        # And the thread takes new runs.
        again = client.post(
            f"{API}/threads/{tid}/runs/wait",
            json={
                "assistant_id": "echo",
                "input": {"messages": [{"role": "user", "content": "x"}]},
            },
        )
        assert again.status_code == 200, again.text
    # One line per outage from each loop that met it, not a traceback per try. (The event
    # writer meets it only if it had events to store while the database was away.)
    logs = gateway.logs()
    assert logs.count("settling a run waits") == 1, logs[-3000:]
    assert logs.count("storing run events waits") <= 1, logs[-3000:]
