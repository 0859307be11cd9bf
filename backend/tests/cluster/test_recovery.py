"""Leases and recovery with real processes on PostgreSQL + Redis: a replica killed mid-run
(both `runs.recover` modes), one frozen past its lease and resumed (fencing), a graceful
shutdown that hands its queued run back, and `serve --workers 2`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cluster.conftest import (
    API,
    LEASE_S,
    TIMEOUT,
    create_run,
    new_thread,
    pg_sessions,
    records,
    wait_log,
    wait_record,
    wait_run,
)

pytestmark = TIMEOUT

# Detection bound with the tests' lease: the lease, one sweep period, and slack for a
# loaded machine — within the 15 s.
BOUND_S = 15.0


@pytest.mark.parametrize("mode", ["error", "resume"])
def test_a_replica_killed_mid_run_is_recovered_by_another(replicas, tmp_path: Path, mode):
    a = replicas(runs={"recover": mode, "lease_s": LEASE_S})
    b = replicas(runs={"recover": mode, "lease_s": LEASE_S})
    log, gate = tmp_path / "log.jsonl", tmp_path / "gate"
    with b.client() as cb, a.client() as ca:
        tid = new_thread(cb)
        body = {"input": {"log": str(log), "gate": str(gate)}, "durability": "sync"}
        rid = create_run(ca, tid, body).json()["run_id"]
        wait_record(log, lambda r: r["node"] == "two" and r["pid"] == a.pid)
        a.kill()  # SIGKILL: no shutdown, no settle, the lease just stops being renewed
        killed = time.monotonic()
        if mode == "error":
            run = wait_run(cb, tid, rid, {"error"}, timeout=60)
            assert time.monotonic() - killed < BOUND_S
            assert run["error"]["error"] == "LeaseExpired"
            assert cb.get(f"{API}/threads/{tid}").json()["status"] == "error"
            # A follower on B ends (the log was closed with the error).
            joined = cb.get(f"{API}/threads/{tid}/runs/{rid}/join")
            assert joined.status_code == 200
        else:
            # B resumes from the last checkpoint: `one` is not run again, `two` is.
            wait_record(log, lambda r: r["node"] == "two" and r["pid"] == b.pid, timeout=60)
            assert time.monotonic() - killed < BOUND_S
            gate.write_text("go")
            assert wait_run(cb, tid, rid, {"success", "error"})["status"] == "success"
            ones = [r for r in records(log) if r["node"] == "one" and r["phase"] == "start"]
            assert len(ones) == 1
            state = cb.get(f"{API}/threads/{tid}").json()
            assert state["status"] == "idle"
            assert state["values"]["steps"] == ["one", "two"]
            assert state["values"]["pid"] == b.pid


def test_a_replica_frozen_past_its_lease_is_fenced_when_it_wakes(replicas, tmp_path: Path):
    a = replicas(runs={"recover": "resume", "lease_s": LEASE_S})
    b = replicas(runs={"recover": "resume", "lease_s": LEASE_S})
    log, gate = tmp_path / "log.jsonl", tmp_path / "gate"
    with b.client() as cb, a.client() as ca:
        tid = new_thread(cb)
        body = {"input": {"log": str(log), "gate": str(gate)}, "durability": "sync"}
        rid = create_run(ca, tid, body).json()["run_id"]
        wait_record(log, lambda r: r["node"] == "two" and r["pid"] == a.pid)
        a.pause()  # SIGSTOP past the lease, wherever A is (even half-way through a statement)
        paused = time.monotonic()
        try:
            wait_record(
                log,
                lambda r: r["node"] == "two" and r["pid"] == b.pid,
                timeout=60,
                explain=lambda: pg_sessions(a) + f"\nB's log:\n{b.logs()[-3000:]}",
            )
            recovered_s = time.monotonic() - paused
            assert recovered_s < BOUND_S
        finally:
            a.resume()  # SIGCONT: A's next heartbeat (or write) finds the lease gone
        wait_log(a, "lost the lease of a run", timeout=LEASE_S * 10)
        gate.write_text("go")
        assert wait_run(cb, tid, rid, {"success", "error"})["status"] == "success"
        state = cb.get(f"{API}/threads/{tid}").json()
        assert state["status"] == "idle"
        assert state["values"]["pid"] == b.pid  # the final state is B's
        assert ca.get(f"{API}/threads/{tid}/runs/{rid}").json()["status"] == "success"
    ends = [r for r in records(log) if r["node"] == "two" and r["phase"] == "end"]
    assert [r["pid"] for r in ends] == [b.pid]  # A stopped before finishing its step


def test_graceful_shutdown_leaves_queued_runs_for_another_replica(replicas, tmp_path: Path):
    a = replicas(runs={"max_concurrency": 1, "drain_timeout_s": 1})
    log = tmp_path / "log.jsonl"
    with a.client() as ca:
        t1, t2 = new_thread(ca), new_thread(ca)
        first = create_run(ca, t1, {"input": {"log": str(log), "gate": str(tmp_path / "no")}})
        rid1 = first.json()["run_id"]
        wait_record(log, lambda r: r["node"] == "two")
        rid2 = create_run(ca, t2, {"input": {"log": str(log)}}).json()["run_id"]
        assert ca.get(f"{API}/threads/{t2}/runs/{rid2}").json()["status"] == "pending"
    assert a.stop(timeout=120) == 0
    b = replicas()
    with b.client() as cb:
        assert wait_run(cb, t2, rid2, {"success", "error"})["status"] == "success"
        assert cb.get(f"{API}/threads/{t1}/runs/{rid1}").json()["status"] == "interrupted"
    assert {r["pid"] for r in records(log) if r["run"] == rid2} == {b.pid}


def test_serve_with_two_workers_runs_every_run_once_in_thread_order(replicas, tmp_path: Path):
    server = replicas(server={"workers": 2})
    log = tmp_path / "log.jsonl"
    with server.client() as c:
        tid = new_thread(c)
        ids = [
            create_run(c, tid, {"input": {"log": str(log), "hold_s": 0.1}}).json()["run_id"]
            for _ in range(4)
        ]
        others = [
            create_run(c, new_thread(c), {"input": {"log": str(log)}}).json() for _ in range(4)
        ]
        for rid in ids:
            assert wait_run(c, tid, rid, {"success", "error"})["status"] == "success"
        for run in others:
            done = wait_run(c, run["thread_id"], run["run_id"], {"success", "error"})
            assert done["status"] == "success"
    recs = records(log)
    for rid in [*ids, *(r["run_id"] for r in others)]:
        assert len([r for r in recs if r["run"] == rid and r["node"] == "two"]) == 2  # once
    starts = [min(r["t"] for r in recs if r["run"] == rid) for rid in ids]
    ends = [max(r["t"] for r in recs if r["run"] == rid) for rid in ids]
    assert all(s >= e for s, e in zip(starts[1:], ends[:-1], strict=True))
    assert server.pid not in {r["pid"] for r in recs}  # the workers executed them
