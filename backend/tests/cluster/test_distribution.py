"""Runs accepted by one replica execute on whichever has a free slot, in per-thread order
across replicas, with the multitask strategies as on one process (real processes on
PostgreSQL + Redis)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.conftest import (
    API,
    TIMEOUT,
    Replica,
    cluster,
    create_run,
    new_thread,
    records,
    wait_record,
    wait_run,
)
from scaleout.sse_kit import chatty, event_id, frames_of

pytestmark = TIMEOUT


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Replica, Replica]]:
    """A (one slot) and B (the default 64), shared by this module's tests: each uses
    threads of its own and waits for its runs to end."""
    with cluster(tmp_path_factory.mktemp("pair")) as start:
        yield start(runs={"max_concurrency": 1}), start()


def test_a_run_accepted_by_a_full_replica_executes_on_another(pair, tmp_path: Path):
    a, b = pair
    log, gate = tmp_path / "log.jsonl", tmp_path / "gate"
    with a.client() as ca, b.client() as cb:
        t1, t2 = new_thread(ca), new_thread(ca)
        r1 = create_run(ca, t1, {"input": {"log": str(log), "gate": str(gate)}}).json()
        wait_record(log, lambda r: r["run"] == r1["run_id"] and r["node"] == "two")
        # A's only slot is taken: its second run goes to the queue and B claims it.
        r2 = create_run(ca, t2, {"input": {"log": str(log)}}).json()
        assert r2["status"] == "pending"
        done = wait_run(cb, t2, r2["run_id"], {"success", "error"})
        assert done["status"] == "success"
        gate.write_text("go")
        assert wait_run(cb, t1, r1["run_id"], {"success", "error"})["status"] == "success"
    pids = {r["run"]: r["pid"] for r in records(log) if r["node"] == "two"}
    assert pids[r1["run_id"]] == a.pid
    assert pids[r2["run_id"]] == b.pid


def test_wait_on_the_accepting_replica_returns_the_output_of_a_run_executed_elsewhere(
    pair, tmp_path: Path
):
    a, b = pair
    log, gate = tmp_path / "log.jsonl", tmp_path / "gate"
    with a.client() as ca, b.client() as cb:
        t1, t2 = new_thread(ca), new_thread(ca)
        r1 = create_run(ca, t1, {"input": {"log": str(log), "gate": str(gate)}}).json()
        wait_record(log, lambda r: r["run"] == r1["run_id"] and r["node"] == "two")
        out = ca.post(
            f"{API}/threads/{t2}/runs/wait",
            json={"assistant_id": "clustered", "input": {"log": str(log)}},
        )
        assert out.status_code == 200, out.text
        assert out.json()["steps"] == ["one", "two"]
        assert out.json()["pid"] == b.pid
        gate.write_text("go")
        wait_run(cb, t1, r1["run_id"], {"success"})


def test_a_run_accepted_on_a_streams_byte_exact_from_b(pair, tmp_path: Path):
    a, b = pair
    gate = tmp_path / "gate"
    with a.client() as ca, b.client() as cb:
        tid = new_thread(ca)
        run = ca.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
        ).json()
        url = f"{API}/threads/{tid}/runs/{run['run_id']}/stream"
        status, live = frames_of(
            cb, url, last_event_id="-1", after=4, then=lambda: gate.write_text("go")
        )
        assert status == 200
        assert wait_run(cb, tid, run["run_id"], {"success", "error"})["status"] == "success"
        _, replay_a = frames_of(ca, url, last_event_id="-1")
        _, replay_b = frames_of(cb, url, last_event_id="-1")
        _, tail = frames_of(cb, url, last_event_id="3")
        joined = cb.get(f"{API}/threads/{tid}/runs/{run['run_id']}/join")
        assert joined.status_code == 200 and joined.json()["emitted"] == 6
    assert [event_id(f) for f in live] == list(range(1, 8))  # metadata + 6 custom
    assert live == replay_a == replay_b
    assert tail == live[3:]


def test_enqueued_runs_of_one_thread_created_alternately_on_a_and_b_never_overlap(
    pair, tmp_path: Path
):
    a, b = pair
    log = tmp_path / "log.jsonl"
    with a.client() as ca, b.client() as cb:
        tid = new_thread(ca)
        ids = []
        for i in range(6):
            client = ca if i % 2 == 0 else cb
            resp = create_run(
                client,
                tid,
                {"input": {"log": str(log), "hold_s": 0.2}, "multitask_strategy": "enqueue"},
            )
            assert resp.status_code == 200, resp.text
            ids.append(resp.json()["run_id"])
        for rid in ids:
            assert wait_run(cb, tid, rid, {"success", "error"})["status"] == "success"
        assert cb.get(f"{API}/threads/{tid}").json()["status"] == "idle"
    recs = records(log)
    spans = []
    for rid in ids:
        mine = [r for r in recs if r["run"] == rid]
        start = min(r["t"] for r in mine if r["phase"] == "start")
        end = max(r["t"] for r in mine if r["phase"] == "end")
        spans.append((start, end))
    # In creation order, each run starts after the previous one ended.
    for (_, prev_end), (start, _) in itertools.pairwise(spans):
        assert start >= prev_end


def test_reject_interrupt_and_rollback_across_replicas(pair, tmp_path: Path):
    a, b = pair
    log = tmp_path / "log.jsonl"
    with a.client() as ca, b.client() as cb:
        tid = new_thread(ca)
        gate = str(tmp_path / "never")
        first = create_run(ca, tid, {"input": {"log": str(log), "gate": gate}}).json()
        wait_run(cb, tid, first["run_id"], {"running"})
        # reject: B refuses while A runs the thread's run.
        refused = create_run(cb, tid, {"input": {"log": str(log)}, "multitask_strategy": "reject"})
        assert refused.status_code == 409, refused.text
        # interrupt: B's new run stops A's, then runs.
        second = create_run(
            cb, tid, {"input": {"log": str(log), "gate": gate}, "multitask_strategy": "interrupt"}
        ).json()
        assert wait_run(ca, tid, first["run_id"], {"interrupted"})["status"] == "interrupted"
        wait_run(ca, tid, second["run_id"], {"running"})
        # rollback: A's new run deletes B's running one, then runs to the end.
        third = create_run(
            ca, tid, {"input": {"log": str(log)}, "multitask_strategy": "rollback"}
        ).json()
        assert wait_run(cb, tid, third["run_id"], {"success", "error"})["status"] == "success"
        assert cb.get(f"{API}/threads/{tid}/runs/{second['run_id']}").status_code == 404
        assert cb.get(f"{API}/threads/{tid}").json()["status"] == "idle"
        statuses = [r["status"] for r in cb.get(f"{API}/threads/{tid}/runs").json()]
        assert sorted(statuses) == ["interrupted", "success"]


def test_a_queued_run_cancelled_from_the_other_replica_never_runs(pair, tmp_path: Path):
    a, b = pair
    log = tmp_path / "log.jsonl"
    with a.client() as ca, b.client() as cb:
        tid = new_thread(ca)
        gate = tmp_path / "gate"
        first = create_run(ca, tid, {"input": {"log": str(log), "gate": str(gate)}}).json()
        queued = create_run(ca, tid, {"input": {"log": str(log)}}).json()
        wait_run(cb, tid, first["run_id"], {"running"})
        resp = cb.post(f"{API}/threads/{tid}/runs/{queued['run_id']}/cancel?wait=true")
        assert resp.status_code == 200, resp.text
        assert cb.get(f"{API}/threads/{tid}/runs/{queued['run_id']}").json()["status"] == (
            "interrupted"
        )
        gate.write_text("go")
        assert wait_run(ca, tid, first["run_id"], {"success"})["status"] == "success"
        assert ca.get(f"{API}/threads/{tid}").json()["status"] == "idle"
    assert not [r for r in records(log) if r["run"] == queued["run_id"]]


def test_a_delayed_run_is_claimed_once_it_is_due(pair, tmp_path: Path):
    a, b = pair
    log = tmp_path / "log.jsonl"
    with a.client() as ca, b.client() as cb:
        tid = new_thread(cb)
        created = time.time()
        run = create_run(cb, tid, {"input": {"log": str(log)}, "after_seconds": 2}).json()
        assert cb.get(f"{API}/threads/{tid}/runs/{run['run_id']}").json()["status"] == "pending"
        assert wait_run(ca, tid, run["run_id"], {"success", "error"})["status"] == "success"
    first = min(r["t"] for r in records(log) if r["run"] == run["run_id"])
    assert first >= created + 2
