"""When the run queue (PostgreSQL + Redis, runtime/cluster/run_queue_cluster.py) claims: a thread's
next run starts as soon as the previous one ends, not at a replica's next poll; a run whose
thread has nothing queued ends without waking anybody (no `work` notice, no claim pass on
every replica); a queued run still tells the others, naming its sender."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from runs.backends import PG_URL
from scaleout.sse_kit import chatty, wait_status
from support.inproc import InProcessServer
from support.redis_kit import REDIS_URL

API = "/api/langgraph"
POLL_S = 60.0  # the safety-net poll: nothing here may wait for it

pytestmark = pytest.mark.skipif(not PG_URL, reason="the run queue needs PostgreSQL")


@pytest.fixture
def start(replica: Callable[..., InProcessServer]) -> Callable[[], InProcessServer]:
    return lambda: replica(runs={"queue_poll_s": POLL_S})


def _echo(text: str) -> dict[str, Any]:
    return {"assistant_id": "echo", "input": {"messages": [{"role": "user", "content": text}]}}


def test_a_threads_queued_run_starts_when_the_previous_one_ends(start, tmp_path: Path):
    a, b = start(), start()
    gate = tmp_path / "gate"
    with a.http() as ca, b.http() as cb:
        tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
        first = ca.post(
            f"{API}/threads/{tid}/runs", json={"assistant_id": "chatty", "input": chatty(gate)}
        ).json()
        wait_status(ca, tid, first["run_id"], {"running"})
        # Accepted on B while the thread is busy on A: queued, claimable once `first` ends.
        second = cb.post(f"{API}/threads/{tid}/runs", json=_echo("next")).json()
        assert second["status"] == "pending"
        began = time.monotonic()
        gate.write_text("go")
        joined = cb.get(f"{API}/threads/{tid}/runs/{second['run_id']}/join")
        waited = time.monotonic() - began
        assert joined.status_code == 200 and "echo: next" in joined.text
        assert waited < POLL_S / 2, f"the queued run waited {waited:.1f}s: a poll, not a wake-up"


def test_only_queued_runs_send_work_notices_and_they_name_their_sender(start, prefix: str):
    a, b = start(), start()
    client = Redis.from_url(REDIS_URL)
    notices = client.pubsub(ignore_subscribe_messages=True)
    notices.subscribe(f"{prefix}:ctl:*")  # the broadcast channel (control.BROADCAST)
    try:
        with a.http() as ca, b.http() as cb:
            for i in range(5):  # idle threads: claimed in the accept transaction
                tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
                out = ca.post(f"{API}/threads/{tid}/runs/wait", json=_echo(f"w{i}"))
                assert out.status_code == 200 and f"echo: w{i}" in out.text
            # A run that cannot be claimed at once (after_seconds) is queued: it tells the
            # replicas, and it is the first notice anybody sent.
            tid = cb.post(f"{API}/threads", json={}).json()["thread_id"]
            late = cb.post(f"{API}/threads/{tid}/runs", json={**_echo("late"), "after_seconds": 1})
            assert late.json()["status"] == "pending"
            first = None
            deadline = time.monotonic() + 60
            while first is None and time.monotonic() < deadline:
                first = notices.get_message(timeout=1.0)
            assert first is not None, "the queued run sent no work notice"
            body = json.loads(first["data"])
            assert body["k"] == "work" and body["s"]  # named, so B skips its own notice
            done = cb.get(f"{API}/threads/{tid}/runs/{late.json()['run_id']}/join")
            assert done.status_code == 200 and "echo: late" in done.text
    finally:
        notices.close()
        client.close()
