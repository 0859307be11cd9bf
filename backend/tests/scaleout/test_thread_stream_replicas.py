"""`GET /threads/{id}/stream` across replicas: a follower on either replica sees the runs
of the thread wherever they execute, the same frames byte for byte, and resumes from an id
it got on the other replica."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from scaleout.sse_kit import chatty, event_id, follow_thread

API = "/api/langgraph"


def _data(block: bytes) -> object:
    for line in block.split(b"\r\n"):
        if line.startswith(b"data: "):
            return json.loads(line[6:])
    return None


def test_followers_on_both_replicas_see_runs_of_both(replica, tmp_path: Path):
    a, b = replica(), replica()
    with a.http() as ca, b.http() as cb:
        tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
        seen: dict[str, list[bytes]] = {}
        followers = [
            threading.Thread(target=lambda c=c, k=k: seen.__setitem__(k, follow_thread(c, tid, 2)))
            for k, c in (("a", ca), ("b", cb))
        ]
        for f in followers:
            f.start()
        body = {
            "assistant_id": "chatty",
            "input": chatty(tmp_path / "open", 2, 0),
            "stream_mode": ["custom"],
        }
        (tmp_path / "open").write_text("go")  # no waiting at the gate
        # One run executes on A, the next on B (each replica runs what it accepted).
        first = ca.post(f"{API}/threads/{tid}/runs/wait", json=body)
        second = cb.post(f"{API}/threads/{tid}/runs/wait", json=body)
        assert first.status_code == 200 and second.status_code == 200
        for f in followers:
            f.join(60)
            assert not f.is_alive()
        # Resuming on A from an id the follower got on B: exactly the rest.
        half = len(seen["b"]) // 2
        middle, later = seen["b"][half], seen["b"][half + 1 :]
        left = sum(b'"run_done"' in f for f in later)
        rest = follow_thread(ca, tid, left, last_event_id=str(event_id(middle)))
    on_a, on_b = seen["a"], seen["b"]
    assert on_a == on_b  # the same thread log, byte for byte, on either replica
    ids = [event_id(f) for f in on_b]
    numbered = [i for i in ids if i is not None]
    assert numbered == ids  # every frame has an id
    assert numbered == sorted(numbered) and len(set(numbered)) == len(numbered)
    done = [_data(f) for f in on_b if b'"run_done"' in f]
    assert len(done) == 2
    custom = [f for f in on_b if f.startswith(b"event: custom")]
    assert len(custom) == 4  # two custom events of each run
    assert rest == later
