"""Two replicas on one database and one Redis: a run executing on A is streamed, joined
and cancelled from B, and B's thread stream sees it (issue 14: the Redis broker)."""

from __future__ import annotations

import threading
from pathlib import Path

from scaleout.sse_kit import chatty, event_id, follow_thread, frames_of, wait_status

API = "/api/langgraph"


def _thread(client) -> str:
    return client.post(f"{API}/threads", json={}).json()["thread_id"]


def test_a_run_on_a_streams_byte_exact_from_b_with_last_event_id(replica, tmp_path: Path):
    a, b = replica(), replica()
    gate = tmp_path / "gate"
    with a.http() as ca, b.http() as cb:
        tid = _thread(ca)
        # B follows the thread before the run exists; A executes the run.
        thread_frames: list[bytes] = []
        follower = threading.Thread(target=lambda: thread_frames.extend(follow_thread(cb, tid)))
        follower.start()
        run = ca.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
        ).json()
        rid = run["run_id"]
        url = f"{API}/threads/{tid}/runs/{rid}/stream"
        status, live = frames_of(
            cb, url, last_event_id="-1", after=4, then=lambda: gate.write_text("go")
        )
        assert status == 200
        assert wait_status(ca, tid, rid, {"success"})["status"] == "success"
        follower.join(60)
        assert not follower.is_alive()
        _, replay_a = frames_of(ca, url, last_event_id="-1")
        _, replay_b = frames_of(cb, url, last_event_id="-1")
        _, tail = frames_of(cb, url, last_event_id="3")
    ids = [event_id(f) for f in live]
    assert ids == list(range(1, len(live) + 1)) and len(live) == 7  # metadata + 6 custom
    assert live[0].startswith(b"event: metadata\r\n")
    assert live == replay_a == replay_b  # byte-exact, live on B and replayed on A or B
    assert tail == live[3:]
    # The thread stream on B saw A's run events and its end.
    run_events = [f for f in thread_frames if b"event: custom" in f]
    assert len(run_events) == 6
    assert b'"run_done"' in thread_frames[-1]


def test_cancel_from_b_with_wait_returns_after_the_run_ended_on_a(replica, tmp_path: Path):
    a, b = replica(), replica()
    gate = tmp_path / "never"  # the run holds until cancelled
    with a.http() as ca, b.http() as cb:
        tid = _thread(ca)
        rid = ca.post(
            f"{API}/threads/{tid}/runs", json={"assistant_id": "chatty", "input": chatty(gate)}
        ).json()["run_id"]
        wait_status(cb, tid, rid, {"running"})
        joined: list[object] = []
        joiner = threading.Thread(
            target=lambda: joined.append(cb.get(f"{API}/threads/{tid}/runs/{rid}/join").json())
        )
        joiner.start()
        resp = cb.post(f"{API}/threads/{tid}/runs/{rid}/cancel?wait=true")
        assert resp.status_code == 200, resp.text
        # wait=true answered: the run has ended on A, its row says so everywhere.
        assert ca.get(f"{API}/threads/{tid}/runs/{rid}").json()["status"] == "interrupted"
        assert ca.get(f"{API}/threads/{tid}").json()["status"] in ("idle", "interrupted")
        joiner.join(60)
        assert not joiner.is_alive() and isinstance(joined[0], dict)
        # Cancelling again from B is the usual no-op; a 202 without wait.
        assert cb.post(f"{API}/threads/{tid}/runs/{rid}/cancel").status_code == 202


def test_b_starting_leaves_a_running_run_alone(replica, tmp_path: Path):
    """Startup recovery settles only the runs of dead processes, not a live replica's."""
    a = replica()
    gate = tmp_path / "gate"
    with a.http() as ca:
        tid = _thread(ca)
        rid = ca.post(
            f"{API}/threads/{tid}/runs", json={"assistant_id": "chatty", "input": chatty(gate)}
        ).json()["run_id"]
        wait_status(ca, tid, rid, {"running"})
        b = replica()
        with b.http() as cb:
            assert cb.get(f"{API}/threads/{tid}/runs/{rid}").json()["status"] == "running"
            gate.write_text("go")
            assert wait_status(cb, tid, rid, {"success", "error"})["status"] == "success"


def test_deleting_a_thread_on_b_stops_its_run_on_a(replica, tmp_path: Path):
    a, b = replica(), replica()
    gate = tmp_path / "never"
    with a.http() as ca, b.http() as cb:
        tid = _thread(ca)
        rid = ca.post(
            f"{API}/threads/{tid}/runs", json={"assistant_id": "chatty", "input": chatty(gate)}
        ).json()["run_id"]
        wait_status(ca, tid, rid, {"running"})
        assert cb.delete(f"{API}/threads/{tid}").status_code == 204
        assert ca.get(f"{API}/threads/{tid}").status_code == 404
        # A's run ended (it was cancelled before the thread went): nothing left in flight.
        assert ca.get(f"{API}/threads/{tid}/runs/{rid}").status_code == 404
