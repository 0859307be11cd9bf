"""Redis going away under a replica (a TCP proxy between them is stopped and started):
a short loss is retried and the stream goes on; a longer one ends the stream with an error
event, new streams and runs get 503 with nothing written, the run still finishes, and
everything is readable again once Redis is back."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from scaleout.sse_kit import chatty, event_id, frames_of, wait_status

API = "/api/langgraph"


def test_a_short_loss_is_retried_and_the_stream_goes_on(redis_proxy, replica, tmp_path: Path):
    app = replica(redis_url=redis_proxy.url, broker={"retry_s": 30.0})
    gate = tmp_path / "gate"

    def blip() -> None:  # Redis away and back while the run waits at its gate
        redis_proxy.stop()
        redis_proxy.start()
        gate.write_text("go")

    with app.http() as client:
        tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
        rid = client.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
        ).json()["run_id"]
        url = f"{API}/threads/{tid}/runs/{rid}/stream"
        status, frames = frames_of(client, url, last_event_id="-1", after=4, then=blip)
        assert status == 200
        assert wait_status(client, tid, rid, {"success", "error"})["status"] == "success"
        _, replay = frames_of(client, url, last_event_id="-1")
    assert [event_id(f) for f in frames] == list(range(1, 8))
    assert not any(f.startswith(b"event: error") for f in frames)
    assert frames == replay


def test_a_long_loss_gives_503s_and_no_stuck_run(redis_proxy, replica, tmp_path: Path):
    app = replica(redis_url=redis_proxy.url, broker={"retry_s": 1.0})
    gate = tmp_path / "gate"
    down = threading.Event()

    def outage() -> None:
        redis_proxy.stop()
        down.set()

    with app.http() as client:
        tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
        rid = client.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
        ).json()["run_id"]
        url = f"{API}/threads/{tid}/runs/{rid}/stream"
        status, frames = frames_of(client, url, last_event_id="-1", after=4, then=outage)
        assert status == 200 and down.is_set()
        # The stream ended with an error event (no id: it is not part of the run's log).
        assert frames[-1].startswith(b"event: error\r\n") and b"BrokerUnavailable" in frames[-1]
        assert event_id(frames[-1]) is None
        assert [event_id(f) for f in frames[:-1]] == [1, 2, 3, 4]
        # Meanwhile: clear 503s, nothing written.
        again = client.get(url, headers={"Last-Event-ID": "-1"})
        assert again.status_code == 503 and "broker" in again.json()["detail"]
        thread_stream = client.get(f"{API}/threads/{tid}/stream")
        assert thread_stream.status_code == 503
        other = client.post(f"{API}/threads", json={}).json()["thread_id"]
        refused = client.post(
            f"{API}/threads/{other}/runs", json={"assistant_id": "echo", "input": {}}
        )
        assert refused.status_code == 503, refused.text
        assert client.get(f"{API}/threads/{other}/runs").json() == []
        assert client.get("/ready").status_code == 503
        # The run itself goes on and settles (its events are kept in the database).
        gate.write_text("go")
        assert wait_status(client, tid, rid, {"success", "error"})["status"] == "success"
        redis_proxy.start()
        _, replay = frames_of(client, url, last_event_id="-1")
        assert client.get("/ready").status_code == 200
    assert [event_id(f) for f in replay] == list(range(1, 8))
    assert replay[:4] == frames[:4]


def _stored_event_ids(db: dict[str, Any], run_id: str) -> list[int]:
    """The ids of a run's events in the database (the `run_events` table)."""
    url = make_url(db["url"])
    driver = "sqlite" if url.get_backend_name() == "sqlite" else "postgresql+psycopg"
    url = url.set(drivername=driver)
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT seq FROM run_events WHERE run_id = :r ORDER BY seq"),
                {"r": run_id},
            )
            return [int(r[0]) for r in rows]
    finally:
        engine.dispose()


def test_a_run_settles_with_all_its_events_while_redis_stays_away(
    redis_proxy, replica, shared_db, tmp_path: Path
):
    """Redis gone mid-run for good (the test ends before it is back): the run still settles
    `success` in the database with every event stored, its thread is not left `busy`, and
    the replica stops cleanly with Redis away."""
    app = replica(redis_url=redis_proxy.url, broker={"retry_s": 1.0})
    gate = tmp_path / "gate"
    with app.http() as client:
        tid = client.post(f"{API}/threads", json={}).json()["thread_id"]
        rid = client.post(
            f"{API}/threads/{tid}/runs",
            json={"assistant_id": "chatty", "input": chatty(gate), "stream_mode": ["custom"]},
        ).json()["run_id"]
        url = f"{API}/threads/{tid}/runs/{rid}/stream"
        status, frames = frames_of(client, url, last_event_id="-1", until=lambda b: len(b) >= 4)
        assert status == 200 and len(frames) == 4  # at its gate
        redis_proxy.stop()
        gate.write_text("go")
        assert wait_status(client, tid, rid, {"success", "error"})["status"] == "success"
        thread = client.get(f"{API}/threads/{tid}").json()
        assert thread["status"] == "idle" and thread["values"]["emitted"] == 6, thread
        ready = client.get("/ready")
        assert ready.status_code == 503 and ready.json()["checks"]["broker"] is False
        assert ready.json()["settles_waiting"] == 0
    assert _stored_event_ids(shared_db, rid) == list(range(1, 8))
    assert "run task failed" not in app.logs()
