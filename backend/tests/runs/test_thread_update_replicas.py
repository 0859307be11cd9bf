"""A state update on one replica and a run accepted on another never interleave (PostgreSQL
and Redis: two gateways on one database and one Redis, as in a scale-out deployment).

The update holds the thread's turn (`threads.turn_until`) while it applies; a run that the
other replica accepts meanwhile is queued, and starts from the updated state once the turn
ends. A run already in
flight on one replica makes an update on the other a 409.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from langgraph_sdk.errors import ConflictError
from psycopg import sql
from sqlalchemy.engine import make_url

from support.inproc import InProcessServer
from support.live import base_config
from support.redis_kit import REDIS_URL, require_redis
from support.sdk import values, wire
from testgraphs.gated import GATES, Gate

PG_URL = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not PG_URL, reason="PRONGHORN_TEST_POSTGRES_URL is not set")


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[InProcessServer, InProcessServer, str]]:
    """Two gateways on one fresh PostgreSQL database and one Redis, and that database's
    libpq URL."""
    assert PG_URL
    require_redis()
    name = f"pronghorn_replicas_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_url(PG_URL).set(database=name)
    config = base_config(
        database={"url": url.render_as_string(hide_password=False)},
        broker={"kind": "redis", "redis_url": REDIS_URL, "key_prefix": f"{name}:"},
    )
    config["graphs"] = {**config["graphs"], "gated": "testgraphs.gated:graph"}
    servers: list[InProcessServer] = []
    try:
        for label in ("a", "b"):
            srv = InProcessServer(tmp_path_factory.mktemp(f"replica-{label}"), config)
            servers.append(srv.start())
        yield servers[0], servers[1], _libpq(url.render_as_string(hide_password=False))
    finally:
        for srv in servers:
            srv.stop()
        with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))


def test_a_run_accepted_elsewhere_waits_for_an_update_in_progress(
    replicas: tuple[InProcessServer, InProcessServer, str],
) -> None:
    a, b, _ = replicas
    name = f"g-{uuid.uuid4().hex[:8]}"
    gate = GATES[name] = Gate()
    with a.sync_sdk() as on_a, b.sync_sdk() as on_b, ThreadPoolExecutor(2) as pool:
        tid = on_a.threads.create(graph_id="gated")["thread_id"]
        update = pool.submit(on_a.threads.update_state, tid, {**human("update"), "gate": name})
        try:
            assert gate.entered.wait(60), "the update never reached its reducer"
            # Accepted on b, but queued: nothing claims it while a's update holds the turn.
            run = on_b.runs.create(tid, "gated", input=human("run"))
            assert on_b.runs.get(tid, run["run_id"])["status"] == "pending"
        finally:
            gate.release.set()
        update.result(60)
        on_b.runs.join(tid, run["run_id"])
        assert on_b.runs.get(tid, run["run_id"])["status"] == "success"
        contents = [m["content"] for m in values(on_a.threads.get_state(tid))["messages"]]
        assert contents == ["update", "run", "done: run"]
        history = on_a.threads.get_history(tid, limit=100)
        for newer, older in itertools.pairwise(history):  # one straight line, no fork
            assert newer["parent_checkpoint"] is not None
            assert newer["parent_checkpoint"]["checkpoint_id"] == wire(older)["checkpoint_id"]


def test_an_update_is_refused_while_another_replica_runs_the_thread(
    replicas: tuple[InProcessServer, InProcessServer, str],
) -> None:
    a, b, _ = replicas
    with a.sync_sdk() as on_a, b.sync_sdk() as on_b:
        tid = on_b.threads.create(graph_id="echo")["thread_id"]
        run = on_b.runs.create(tid, "echo", input={**human("slow"), "sleep": 60})
        try:
            # The accept marked the thread busy in the database: replica a sees it at once.
            with pytest.raises(ConflictError, match="busy"):
                on_a.threads.update_state(tid, human("sneaky"))
        finally:
            on_b.runs.cancel(tid, run["run_id"], wait=True)
        on_a.threads.update_state(tid, human("after"))  # idle again: accepted
