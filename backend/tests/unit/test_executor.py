"""The executor on a real runtime (SQLite, the echo graph), without HTTP: the time limit,
a cancel in the middle of the stream (interrupt and rollback), a graph's own interrupt,
failures, and what settling leaves behind (every event stored before the final status,
the thread row's status and cached values). Each test waits on the run's own events."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import Connection

from pronghorn.auth.principal import LOCAL_PRINCIPAL
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.events.broker import Event
from pronghorn.runtime.events.event_store import SqlEventStore
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.runtime.wiring.assemble import open_runtime
from support.live import base_config
from support.sdk import as_state
from unit.run_events import is_custom, is_update, until_event

ME = Access(LOCAL_PRINCIPAL)
Opener = Callable[..., Awaitable[AppRuntime]]


@pytest.fixture
async def open_rt(tmp_path: Path) -> AsyncIterator[Opener]:
    """Factory: a runtime with config overrides (closed after the test)."""
    stack: list[Any] = []

    async def _open(**overrides: Any) -> AppRuntime:
        path = tmp_path / f"config{len(stack)}.yaml"
        path.write_text(yaml.safe_dump(base_config(**overrides)), encoding="utf-8")
        cm = open_runtime(ConfigHolder(load_config(path, {})), base_dir=tmp_path)
        stack.append(cm)
        return await cm.__aenter__()

    yield _open
    for cm in reversed(stack):
        await cm.__aexit__(None, None, None)


@pytest.fixture
async def runtime(open_rt: Opener) -> AppRuntime:
    return await open_rt()


def request(text: str = "hi", **body: Any) -> RunCreate:
    return RunCreate.model_validate(
        {
            "assistant_id": "echo",
            "if_not_exists": "create",
            "input": {"messages": [{"role": "human", "content": text}], **body.pop("input", {})},
            **body,
        }
    )


async def start(runtime: AppRuntime, req: RunCreate) -> tuple[str, Job]:
    tid = str(uuid.uuid4())
    return tid, await runtime.runs.create(tid, req, ME)


async def stored_events(runtime: AppRuntime, run_id: str) -> list[Event]:
    """What the `run_events` table holds for the run (not the broker's cache)."""
    return await SqlEventStore(runtime.db).read(run_id, 0, 10_000)


async def thread_row(runtime: AppRuntime, tid: str) -> dict[str, Any]:
    row = await runtime.db.read(lambda conn: threads_repo.get_row(conn, tid))
    assert row is not None
    return dataclasses.asdict(row)


async def test_a_run_over_its_time_limit_ends_in_timeout(open_rt: Opener) -> None:
    runtime = await open_rt(runs={"timeout_s": 0.2})
    tid, job = await start(runtime, request(input={"sleep": 120}))
    await job.done.wait()
    assert job.status == "timeout"
    assert job.error == {"error": "TimeoutError", "message": "Run exceeded its 0.2s limit"}
    assert job.output == {"__error__": job.error}
    errors = [e for e in await stored_events(runtime, job.run_id) if e.event == "error"]
    assert [json.loads(e.data) for e in errors] == [job.error]
    row = await thread_row(runtime, tid)
    assert row["status"] == "error" and row["error"] == job.error


async def test_a_cancel_mid_stream_interrupts_and_keeps_the_steps_done(runtime: AppRuntime) -> None:
    tid, job = await start(
        runtime,
        request("slow", input={"sleep": 120}, stream_mode=["values", "updates", "custom"]),
    )
    # `prepare`'s step done (its update streamed), not only begun: its custom event is
    # written as the node starts, and a cancel between the two would leave no step to keep.
    await until_event(runtime, job, is_update("prepare"))
    await runtime.runs.cancel(tid, job.run_id, action="interrupt", wait=True)
    assert job.status == "interrupted" and job.error is None
    events = await stored_events(runtime, job.run_id)
    assert events[0].event == "metadata" and all(e.event != "error" for e in events)
    # `prepare` finished and was checkpointed (durability async): its step is kept.
    assert as_state(job.output)["sleep"] == 120
    assert as_state(job.output)["messages"][-1]["content"] == "slow"
    row = await thread_row(runtime, tid)
    # `respond` is still to run: the thread is `interrupted` (not busy: free for the next run)
    assert row["status"] == "interrupted"
    assert row["values"]["sleep"] == 120
    assert row["values"]["messages"][-1]["content"] == "slow"
    state = await runtime.checkpointer.aget_tuple(thread_config(tid))
    assert state is not None and state.metadata["step"] == 1  # prepare's step, the last one kept

    def unit(conn: Connection):
        assert conn.scalar(runs_status(job.run_id)) == "interrupted"

    await runtime.db.read(unit)


async def test_a_rollback_mid_stream_deletes_the_run_and_its_checkpoints(
    runtime: AppRuntime,
) -> None:
    tid, first = await start(runtime, request("kept"))
    await first.done.wait()
    before = [c async for c in runtime.checkpointer.alist(thread_config(tid))]
    job = await runtime.runs.create(
        tid, request("dropped", input={"sleep": 120}, stream_mode=["custom"]), ME
    )
    await until_event(runtime, job, is_custom("prepare"))
    await runtime.runs.cancel(tid, job.run_id, action="rollback", wait=True)
    assert job.status == "interrupted"
    after = [c async for c in runtime.checkpointer.alist(thread_config(tid))]
    assert [c.checkpoint["id"] for c in after] == [c.checkpoint["id"] for c in before]

    def unit(conn: Connection):
        assert conn.scalar(runs_status(job.run_id)) is None  # the run row is gone

    await runtime.db.read(unit)
    row = await thread_row(runtime, tid)
    assert row["status"] == "idle"
    assert [m["content"] for m in row["values"]["messages"]] == ["kept", "echo: kept"]


async def test_a_graph_interrupt_succeeds_and_leaves_the_thread_interrupted(
    runtime: AppRuntime,
) -> None:
    tid, job = await start(runtime, request(input={"interrupt": True}))
    await job.done.wait()
    assert job.status == "success"
    [question] = as_state(job.output)["__interrupt__"]
    assert question["value"] == {"question": "continue?", "turns": 0}
    row = await thread_row(runtime, tid)
    assert row["status"] == "interrupted"
    [(task_id, items)] = row["interrupts"].items()
    assert task_id and items[0]["value"]["question"] == "continue?"


async def test_a_failure_is_an_error_event_and_an_error_thread(runtime: AppRuntime) -> None:
    tid, job = await start(runtime, request(input={"fail": True}))
    await job.done.wait()
    assert job.status == "error"
    assert job.error == {"error": "ValueError", "message": "echo: requested failure"}
    events = await stored_events(runtime, job.run_id)
    assert events[-1].event == "error" and json.loads(events[-1].data) == job.error
    row = await thread_row(runtime, tid)
    assert row["status"] == "error" and row["error"] == job.error
    # The thread takes a new run after a failed one.
    again = await runtime.runs.create(tid, request("again", input={"fail": False}), ME)
    await again.done.wait()
    assert again.status == "success"
    assert (await thread_row(runtime, tid))["status"] == "idle"


async def test_settle_stores_every_event_in_order_before_the_final_status(
    runtime: AppRuntime,
) -> None:
    tid, job = await start(
        runtime, request("many", input={"chunks": 40}, stream_mode=["messages", "values"])
    )
    seen: list[Event] = [e async for e in runtime.broker.subscribe(job.run_id, after=0)]
    await job.done.wait()
    stored = await stored_events(runtime, job.run_id)
    assert [(e.id, e.event) for e in stored] == [(e.id, e.event) for e in seen]
    ids = [e.id for e in stored]
    assert ids == sorted(set(ids)) and len(ids) > 40

    def unit(conn: Connection):
        assert conn.scalar(runs_status(job.run_id)) == "success"

    await runtime.db.read(unit)
    # The cached values are what the run's own stream ended with: the checkpoint's.
    row = await thread_row(runtime, tid)
    latest = await runtime.checkpointer.aget_tuple(thread_config(tid))
    assert latest is not None
    kept = latest.checkpoint["channel_values"]["messages"]
    assert [m["content"] for m in row["values"]["messages"]] == [m.content for m in kept]
    assert row["values"]["messages"][-1]["content"] == " ".join(f"t{i}" for i in range(40))


# --- helpers ------------------------------------------------------------------------------------


def thread_config(tid: str) -> Any:
    return {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}


def runs_status(run_id: str) -> Any:
    from sqlalchemy import select

    from pronghorn.persistence.tables import runs

    return select(runs.c.status).where(runs.c.run_id == run_id)
