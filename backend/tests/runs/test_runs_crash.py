"""Crash safety: kill -9 the server mid-run, restart it, and find nothing stuck."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from runs.runkit import frame_id, human, read_events
from support.live import LiveServer, base_config


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for the module. Each test works on its own thread, kills or stops the
    server mid-run and restarts it (what the test is about) with the config that restart
    needs; a short drain for the graceful stop (a kill -9 skips it anyway)."""
    srv = LiveServer(tmp_path_factory.mktemp("crash"), base_config(runs={"drain_timeout_s": 0.5}))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _running(srv: LiveServer) -> LiveServer:
    """The shared server, started again if an earlier test failed while it was down."""
    if srv.proc is None or srv.proc.poll() is not None:
        srv.proc = None
        srv.start()
    return srv


def _start_slow_run(srv: LiveServer, gate: Path) -> tuple[str, str]:
    """A run of a thread's second turn, held in `respond` until `gate` exists (after its
    `prepare` checkpoint), and a third turn queued behind it."""
    with httpx.Client(timeout=30) as http:
        tid = http.post(f"{srv.api}/threads", json={}).json()["thread_id"]
        http.post(
            f"{srv.api}/threads/{tid}/runs/wait",
            json={"assistant_id": "echo", "input": human("before")},
        ).raise_for_status()
        run = http.post(
            f"{srv.api}/threads/{tid}/runs",
            json={
                "assistant_id": "echo",
                "input": {**human("during"), "gate": str(gate)},
                "durability": "sync",
            },
        ).json()
        # Until `prepare` has checkpointed (durability sync): the thread's next step is
        # `respond`, which waits for the gate, so the kill lands mid-run after a checkpoint.
        deadline = time.monotonic() + 60
        while http.get(f"{srv.api}/threads/{tid}/state").json()["next"] != ["respond"]:
            assert time.monotonic() < deadline, "the run never checkpointed `prepare`"
            time.sleep(0.05)
        status = http.get(f"{srv.api}/threads/{tid}/runs/{run['run_id']}").json()["status"]
        assert status == "running"
        queued = http.post(
            f"{srv.api}/threads/{tid}/runs", json={"assistant_id": "echo", "input": human("queued")}
        ).json()
        assert queued["status"] == "pending"
    return tid, run["run_id"]


@pytest.mark.parametrize("mode", ["error", "resume"])
def test_kill_9_mid_run_then_restart(server: LiveServer, mode: str, tmp_path: Path) -> None:
    srv = _running(server)
    gate = tmp_path / "gate"
    tid, rid = _start_slow_run(srv, gate)
    srv.kill()  # SIGKILL: no shutdown hooks run
    srv.proc = None
    srv.config["runs"]["recover"] = mode  # what the restarted server does with the run
    srv.start()
    with httpx.Client(timeout=60) as http:
        run = http.get(f"{srv.api}/threads/{tid}/runs/{rid}").json()
        if mode == "error":
            assert run["status"] == "error"
            assert run["error"]["error"] == "ServerRestart"
            # the queued run was left pending too: also settled, thread not stuck busy
            runs = http.get(f"{srv.api}/threads/{tid}/runs").json()
            assert {r["status"] for r in runs} <= {"success", "error"}
            thread = http.get(f"{srv.api}/threads/{tid}").json()
            assert thread["status"] == "error"
            # and the thread is usable again
            out = http.post(
                f"{srv.api}/threads/{tid}/runs/wait",
                json={"assistant_id": "echo", "input": {**human("after"), "gate": ""}},
            ).json()
            assert out["last_echo"] == "after"
            assert http.get(f"{srv.api}/threads/{tid}").json()["status"] == "idle"
        else:
            assert run["status"] in ("pending", "running")  # held by the gate
            gate.touch()
            out = http.get(f"{srv.api}/threads/{tid}/runs/{rid}/join").json()
            # resumed from the checkpoint after `prepare`: the input was not re-added
            contents = [m["content"] for m in out["messages"]]
            assert contents.count("during") == 1
            assert contents[-1] == "echo: during"
            run = http.get(f"{srv.api}/threads/{tid}/runs/{rid}").json()
            assert run["status"] == "success"
            deadline = time.monotonic() + 60
            while http.get(f"{srv.api}/threads/{tid}").json()["status"] != "idle":
                assert time.monotonic() < deadline
                time.sleep(0.1)
            runs = http.get(f"{srv.api}/threads/{tid}/runs").json()
            assert [r["status"] for r in runs] == ["success"] * 3


def test_graceful_shutdown_interrupts_and_exits_zero(server: LiveServer, tmp_path: Path) -> None:
    srv = _running(server)  # started with runs.drain_timeout_s 0.5
    tid, rid = _start_slow_run(srv, tmp_path / "gate")  # never opened: the drain ends it
    t0 = time.monotonic()
    code = srv.stop(timeout=30)
    assert code == 0
    assert time.monotonic() - t0 < 20
    srv.proc = None
    srv.config["runs"].pop("recover", None)  # the default, as the other tests found it
    srv.start()
    with httpx.Client(timeout=30) as http:
        run = http.get(f"{srv.api}/threads/{tid}/runs/{rid}").json()
        assert run["status"] == "interrupted"
        thread = http.get(f"{srv.api}/threads/{tid}").json()
        assert thread["status"] != "busy"
        # a finished run's events survive the restart (persisted when it ended)
        first = http.get(f"{srv.api}/threads/{tid}/runs").json()[-1]
        assert first["status"] == "success"
        _, frames = read_events(
            http,
            "GET",
            f"{srv.api}/threads/{tid}/runs/{first['run_id']}/stream",
            headers={"Last-Event-ID": "-1"},
        )
        assert frames[0].event == "metadata"
        assert [frame_id(f) for f in frames] == list(range(1, len(frames) + 1))
        assert frames[-1].data is not None and '"echo: before"' in frames[-1].data
        _, rest = read_events(
            http,
            "GET",
            f"{srv.api}/threads/{tid}/runs/{first['run_id']}/stream",
            headers={"Last-Event-ID": "1"},
        )
        assert [f.id for f in rest] == [f.id for f in frames[1:]]
