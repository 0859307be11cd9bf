"""`Runs.start` and `threads.ensure`: every way in starts runs and creates threads alike.

A run the embedded client, the IM dispatcher or an agent protocol starts is the run the
runs API would create for the same input (the same request, defaults and stored fields);
a thread an agent protocol creates is the thread `POST /threads` would create.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

from isolation.appkit import PRINCIPALS, App
from memory.test_api import running
from pronghorn.client import Pronghorn
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.errors import InvalidRun, NotFound
from pronghorn.runtime.services import agent_calls, threads
from pronghorn.runtime.services.runs import Message, Resume, Runs, RunStart

ALICE = Access(PRINCIPALS["alice"])
BOB = Access(PRINCIPALS["bob"])
KEPT = ("assistant_id", "kwargs", "metadata", "multitask_strategy", "status")


def _same_run(run: dict[str, Any]) -> dict[str, Any]:
    return {k: run[k] for k in KEPT}


@pytest.mark.parametrize(
    ("start", "body"),
    [
        (
            RunStart(assistant_id="echo", turn=Message.of("hi")),
            {"assistant_id": "echo", "input": {"messages": [{"role": "human", "content": "hi"}]}},
        ),
        (
            RunStart(
                assistant_id="lead_agent",
                turn=Resume({"approve": True}),
                stream_mode=("messages-tuple", "values"),
                context={"model_name": "m"},
                config={"configurable": {"x": 1}},
                metadata={"channel": "slack"},
            ),
            {
                "assistant_id": "lead_agent",
                "command": {"resume": {"approve": True}},
                "stream_mode": ["messages-tuple", "values"],
                "context": {"model_name": "m"},
                "config": {"configurable": {"x": 1}},
                "metadata": {"channel": "slack"},
            },
        ),
    ],
)
def test_a_run_start_is_the_api_request_for_the_same_input(
    start: RunStart, body: dict[str, Any]
) -> None:
    """What the client and the dispatcher say is parsed into exactly the runs API's request
    (its defaults included: enqueue, continue on disconnect, no checkpoint)."""
    assert start.request().model_dump() == RunCreate.model_validate(body).model_dump()


def test_a_bad_run_start_is_invalid_run() -> None:
    with pytest.raises(InvalidRun, match="stream_mode"):
        RunStart(assistant_id="echo", stream_mode=("nope",)).request()
    with pytest.raises(InvalidRun, match="mutually exclusive"):
        RunStart(assistant_id="echo", turn=Resume(1), options={"input": {}}).request()


async def _stored_run(app: App, thread_id: str, run_id: str) -> dict[str, Any]:
    async with app.http("alice") as http:
        r = await http.get(f"/api/langgraph/threads/{thread_id}/runs/{run_id}/join")
        assert r.status_code == 200, r.text
        r = await http.get(f"/api/langgraph/threads/{thread_id}/runs/{run_id}")
        assert r.status_code == 200
        return r.json()


async def test_client_service_and_http_store_the_same_run(tmp_path: Path) -> None:
    """The same message on three threads of alice's — over HTTP, through `Runs.start` (the
    dispatcher's and protocols' way) and through the embedded client — makes three runs
    whose stored request, metadata, strategy and outcome are identical (the graph id
    resolves to the same assistant everywhere)."""
    async with running(tmp_path) as app:
        client = Pronghorn(app.runtime, principal=PRINCIPALS["alice"])
        tids = [(await client.create_thread())["thread_id"] for _ in range(3)]
        body = {
            "assistant_id": "echo",
            "input": {"messages": [{"role": "human", "content": "hi"}]},
            "context": {"k": "v"},
        }
        async with app.http("alice") as http:
            r = await http.post(f"/api/langgraph/threads/{tids[0]}/runs", json=body)
            assert r.status_code == 200, r.text
            via_http = await _stored_run(app, tids[0], r.json()["run_id"])
        start = RunStart(assistant_id="echo", turn=Message.of("hi"), context={"k": "v"})
        job = await Runs(app.runtime).start(ALICE, tids[1], start)
        via_service = await _stored_run(app, tids[1], job.run_id)
        parts = [
            p
            async for p in client.stream(
                tids[2], "hi", assistant_id="echo", stream_mode="values", context={"k": "v"}
            )
        ]
        assert parts[-1].event != "error"
        async with app.http("alice") as http:
            (listed,) = (await http.get(f"/api/langgraph/threads/{tids[2]}/runs")).json()
        via_client = await _stored_run(app, tids[2], listed["run_id"])
    assert via_http["status"] == "success"
    assert _same_run(via_service) == _same_run(via_http)
    assert _same_run(via_client) == _same_run(via_http)


async def _thread(app: App, key: str, thread_id: str) -> tuple[int, dict[str, Any]]:
    async with app.http(key) as http:
        r = await http.get(f"/api/langgraph/threads/{thread_id}")
        return r.status_code, r.json()


@contextlib.contextmanager
def database(kind: str) -> Iterator[dict[str, Any]]:
    """Config overrides: SQLite, or a fresh PostgreSQL database dropped afterwards."""
    if kind == "sqlite":
        yield {}
        return
    base = os.environ.get("PRONGHORN_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("PRONGHORN_TEST_POSTGRES_URL is not set")
    name = f"pronghorn_start_{uuid.uuid4().hex[:12]}"
    libpq = make_url(base).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(libpq, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield {"database": {"url": make_url(base).set(database=name).render_as_string(False)}}
    finally:
        with psycopg.connect(libpq, autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_protocol_thread_is_the_http_thread(tmp_path: Path, kind: str) -> None:
    """A thread an agent call creates (A2A, MCP and OpenAI chat go through `start_call`)
    has the owner, metadata and status `POST /threads` gives the same graph; another user's
    thread is not found to a call; concurrent calls on one new id make one thread."""
    with database(kind) as overrides:
        await _protocol_thread_is_the_http_thread(tmp_path, overrides)


async def _protocol_thread_is_the_http_thread(tmp_path: Path, overrides: dict[str, Any]) -> None:
    async with running(tmp_path, **overrides) as app:
        async with app.http("alice") as http:
            r = await http.post("/api/langgraph/threads", json={"graph_id": "echo"})
            assert r.status_code == 200, r.text
            over_http = r.json()["thread_id"]
            run = {
                "assistant_id": "echo",
                "input": {"messages": [{"role": "human", "content": "hi"}]},
            }
            r = await http.post(f"/api/langgraph/threads/{over_http}/runs/wait", json=run)
            assert r.status_code == 200, r.text
        callee = await agent_calls.find_callee(app.runtime, ALICE, "echo", ["*"])
        job = await agent_calls.start_call(
            app.runtime,
            ALICE,
            callee,
            graph_input={"messages": [{"role": "human", "content": "hi"}]},
        )
        await _stored_run(app, job.thread_id, job.run_id)
        _, by_call = await _thread(app, "alice", job.thread_id)
        _, by_http = await _thread(app, "alice", over_http)
        assert by_call["metadata"] == by_http["metadata"]  # graph and assistant ids
        assert by_call["metadata"]["graph_id"] == "echo"
        assert by_call["status"] == by_http["status"] == "idle"
        assert (await _thread(app, "bob", job.thread_id))[0] == 404  # alice's, as over HTTP
        assert (await _thread(app, "bob", over_http))[0] == 404

        with pytest.raises(NotFound):  # bob cannot adopt alice's thread through a call
            await agent_calls.start_call(app.runtime, BOB, callee, thread_id=over_http)
        with pytest.raises(NotFound):
            await threads.ensure(app.runtime, BOB, over_http, "echo")

        fresh = "00000000-0000-4000-8000-0000000000aa"
        made = await asyncio.gather(
            *(threads.ensure(app.runtime, ALICE, fresh, "echo") for _ in range(4))
        )
        assert {m.thread_id for m in made} == {fresh}
        assert {m.owner_id for m in made} == {"alice"}
        assert all(m.metadata == {"graph_id": "echo"} and m.status == "idle" for m in made)
        async with app.http("alice") as http:
            r = await http.post("/api/langgraph/threads/search", json={"limit": 10})
            ids = [t["thread_id"] for t in r.json()]
        assert ids.count(fresh) == 1
