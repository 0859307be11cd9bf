"""The run engine on PostgreSQL (set PRONGHORN_TEST_POSTGRES_URL; .ci/run does)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from langgraph_sdk.errors import ConflictError, NotFoundError
from psycopg import sql
from sqlalchemy.engine import make_url

from runs.runkit import human, wait_next, wait_status
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

PG_URL = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not PG_URL, reason="PRONGHORN_TEST_POSTGRES_URL is not set")


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    assert PG_URL
    name = f"pronghorn_runs_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    srv = InProcessServer(
        tmp_path_factory.mktemp("pgruns"), base_config(database={"url": url})
    ).start()
    try:
        yield srv
    finally:
        srv.stop()
        with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))


async def test_runs_queue_stream_and_resume_on_postgres(pg_server: InProcessServer):
    client = pg_server.sdk()
    t = await client.threads.create()
    tid = t["thread_id"]
    r1 = await client.runs.create(tid, "echo", input={**human("a"), "sleep": 0.5})
    # The echo graph's knobs are state: without its own, b would sleep as long as a.
    r2 = await client.runs.create(tid, "echo", input={**human("b"), "sleep": 0})
    with pytest.raises(ConflictError):
        await client.runs.create(tid, "echo", input=human("c"), multitask_strategy="reject")
    out = await client.runs.join(tid, r2["run_id"])
    assert [m["content"] for m in out["messages"]] == ["a", "echo: a", "b", "echo: b"]
    assert [r["status"] for r in await client.runs.list(tid)] == ["success", "success"]
    assert (await client.runs.get(tid, r1["run_id"]))["status"] == "success"
    assert (await client.threads.get(tid))["status"] == "idle"

    parts = [
        p
        async for p in client.runs.stream(
            tid, "echo", input={**human("q"), "interrupt": True}, stream_mode="updates"
        )
    ]
    assert "__interrupt__" in parts[-1].data
    assert (await client.threads.get(tid))["status"] == "interrupted"
    out = await client.runs.wait(tid, "echo", command={"resume": "yes"})
    assert as_state(out)["answer"] == "yes"
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_rollback_and_errors_on_postgres(pg_server: InProcessServer):
    client = pg_server.sdk()
    t = await client.threads.create()
    tid = t["thread_id"]
    await client.runs.wait(tid, "echo", input=human("keep"))
    before = await client.threads.get_state(tid)
    run = await client.runs.create(tid, "echo", input={**human("drop"), "sleep": 5})
    await wait_status(client, tid, run["run_id"], {"running"})
    await wait_next(client, tid, ["respond"])  # `prepare` has checkpointed
    await client.runs.cancel(tid, run["run_id"], wait=True, action="rollback")
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, run["run_id"])
    after = await client.threads.get_state(tid)
    assert after["values"] == before["values"]
    out = await client.runs.wait(tid, "echo", input={**human("f"), "fail": True}, raise_error=False)
    assert as_state(out)["__error__"]["error"] == "ValueError"
    assert (await client.threads.get(tid))["status"] == "error"
