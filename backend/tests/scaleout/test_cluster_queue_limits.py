"""The queue limits of one process hold for the cluster (PostgreSQL + Redis, two replicas in
this process): `runs.max_queue_wait_s` ends a run left waiting in the database queue, once,
without starting it; `runs.max_queued` and `runs.max_queued_per_user` count the runs queued
on every replica."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from runs.backends import PG_URL
from scaleout.sse_kit import frames_of, wait_status
from support.inproc import InProcessServer

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="the cluster queue needs PostgreSQL: set PRONGHORN_TEST_POSTGRES_URL"
)

API = "/api/langgraph"
GRAPHS = {"clustered": "testgraphs.clustered:graph"}


@pytest.fixture
def cluster_replica(
    replica: Callable[..., InProcessServer],
) -> Callable[..., InProcessServer]:
    """`cluster_replica(**runs)`: one more replica on the shared database and Redis prefix."""
    return lambda **runs: replica(graphs=GRAPHS, runs={"queue_poll_s": 0.5, **runs})


def gated_run(client: httpx.Client, tid: str, log: Path, gate: Path) -> httpx.Response:
    body = {"assistant_id": "clustered", "input": {"log": str(log), "gate": str(gate)}}
    return client.post(f"{API}/threads/{tid}/runs", json=body)


def wait_started(log: Path, run_id: str) -> None:
    deadline = time.monotonic() + 60
    while not (log.exists() and run_id in log.read_text()):
        assert time.monotonic() < deadline, "the first run never started"
        time.sleep(0.05)


def test_a_run_left_in_the_cluster_queue_past_max_queue_wait_s_ends_error_once(
    cluster_replica, tmp_path: Path
):
    limits = {"max_queue_wait_s": 1.0, "lease_s": 3.0}
    a, b = cluster_replica(**limits), cluster_replica(**limits)
    log, gate = tmp_path / "log.jsonl", tmp_path / "gate"
    with a.http() as ca, b.http() as cb:
        tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
        first = gated_run(ca, tid, log, gate).json()["run_id"]
        wait_started(log, first)
        # The thread is busy: the second run waits in the database queue.
        second = gated_run(cb, tid, log, gate).json()["run_id"]
        try:
            run = wait_status(ca, tid, second, {"error", "success"})
        finally:
            gate.write_text("go")
        assert run["status"] == "error"
        assert wait_status(cb, tid, first, {"success", "error"})["status"] == "success"
        status, blocks = frames_of(
            cb, f"{API}/threads/{tid}/runs/{second}/stream", last_event_id="-1"
        )
        joined = ca.get(f"{API}/threads/{tid}/runs/{second}/join").json()
    assert status == 200
    errors = [b for b in blocks if b.startswith(b"event: error")]
    assert len(errors) == 1  # ended by one sweeper, once
    data = [line for line in errors[0].split(b"\r\n") if line.startswith(b"data: ")]
    payload = json.loads(data[0][len(b"data: ") :])
    assert payload["error"] == "QueueTimeout" and "runs.max_queue_wait_s" in payload["message"]
    assert joined["__error__"]["error"] == "QueueTimeout"
    ran = [json.loads(line)["run"] for line in log.read_text().splitlines()]
    assert second not in ran  # never started


@pytest.mark.parametrize("cap", ["max_queued", "max_queued_per_user"])
def test_the_queue_caps_count_the_runs_queued_on_every_replica(
    cluster_replica, tmp_path: Path, cap: str
):
    limits = {cap: 1, "max_concurrency": 2}
    a, b = cluster_replica(**limits), cluster_replica(**limits)
    log, gate = tmp_path / "log.jsonl", tmp_path / "gate"
    with a.http() as ca, b.http() as cb:
        tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
        try:
            first = gated_run(ca, tid, log, gate).json()["run_id"]
            wait_started(log, first)
            queued = gated_run(ca, tid, log, gate)
            assert queued.status_code == 200  # one may wait
            # B has no run of its own waiting: it refuses because A's run waits.
            refused = gated_run(cb, tid, log, gate)
            assert refused.status_code == 429
            assert int(refused.headers["Retry-After"]) >= 1
            assert f"runs.{cap} is 1" in refused.json()["detail"]
            # A batch on B of more runs than B can start at once is refused before
            # anything is written (the ones left over would wait past the cap).
            batch = [{"assistant_id": "clustered", "input": {"log": str(log), "gate": str(gate)}}]
            before = len(ca.post(f"{API}/threads/search", json={"limit": 100}).json())
            assert cb.post(f"{API}/runs/batch", json=batch * 3).status_code == 429
            assert len(ca.post(f"{API}/threads/search", json={"limit": 100}).json()) == before
        finally:
            gate.write_text("go")
        for rid in (first, queued.json()["run_id"]):
            assert wait_status(ca, tid, rid, {"success", "error"})["status"] == "success"
        # The queue is empty again: B accepts.
        assert gated_run(cb, tid, log, gate).status_code == 200
