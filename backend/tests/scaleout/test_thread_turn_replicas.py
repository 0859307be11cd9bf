"""A state update is cluster-wide (runtime/services/thread_state.py): while one replica applies an
update to a thread (it holds the thread's turn), another replica refuses a second update
(409) and queues a run of the thread, which starts once the turn ends, from the updated
state. The turn is taken here as a replica mid-update would hold it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, select
from sqlalchemy.engine import make_url

from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.tables import runs
from runs.backends import PG_URL
from scaleout.sse_kit import wait_status
from support.inproc import InProcessServer

API = "/api/langgraph"

pytestmark = pytest.mark.skipif(not PG_URL, reason="thread turns need PostgreSQL")


@pytest.fixture
def db(shared_db: dict[str, Any]) -> Iterator[Engine]:
    url = make_url(shared_db["url"]).set(drivername="postgresql+psycopg")
    eng = create_engine(url)
    try:
        yield eng
    finally:
        eng.dispose()


def _echo(text: str) -> dict[str, Any]:
    return {
        "assistant_id": "echo",
        "input": {"messages": [{"role": "user", "content": text}], "sleep": 0},
    }


def test_an_update_in_progress_anywhere_serializes_the_other_replicas(
    replica: Callable[..., InProcessServer], db: Engine
):
    a, b = replica(runs={"queue_poll_s": 1.0}), replica(runs={"queue_poll_s": 1.0})
    with a.http() as ca, b.http() as cb:
        tid = ca.post(f"{API}/threads", json={}).json()["thread_id"]
        first = ca.post(f"{API}/threads/{tid}/runs", json=_echo("one")).json()
        assert wait_status(ca, tid, first["run_id"], {"success", "error"})["status"] == "success"
        with db.begin() as conn:  # A is applying an update
            assert threads_repo.take_turn(conn, tid, hold_s=300) == ("idle", False)
        refused = cb.post(
            f"{API}/threads/{tid}/state",
            json={"values": {"messages": [{"role": "user", "content": "x"}]}},
        )
        assert refused.status_code == 409
        assert "another state update" in refused.text
        queued = cb.post(f"{API}/threads/{tid}/runs", json=_echo("two")).json()
        assert queued["status"] == "pending"
        with db.begin() as conn:  # queued, not claimed by B at accept time
            owner = conn.execute(
                select(runs.c.owner).where(runs.c.run_id == queued["run_id"])
            ).scalar_one()
        assert owner is None
        with db.begin() as conn:  # A's update is done
            conn.execute(threads_repo.end_turn_stmt(tid))
        done = wait_status(cb, tid, queued["run_id"], {"success", "error"})
        assert done["status"] == "success"
        # And an update through the API, on an idle thread, still applies (and ends its turn).
        applied = cb.post(
            f"{API}/threads/{tid}/state",
            json={"values": {"messages": [{"role": "user", "content": "three"}]}},
        )
        assert applied.status_code == 200
        after = ca.post(f"{API}/threads/{tid}/runs", json=_echo("four")).json()
        assert wait_status(ca, tid, after["run_id"], {"success", "error"})["status"] == "success"
