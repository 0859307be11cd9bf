"""The run manager and executor on a real runtime (SQLite, the echo graph), without HTTP:
a run's lifecycle, multitask strategies, cancel semantics and failures, each awaited on the
job's own events."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pronghorn.auth.principal import LOCAL_PRINCIPAL
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.errors import Conflict, NotFound
from pronghorn.runtime.services.thread_state import read_history
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.runtime.wiring.assemble import open_runtime
from support.live import base_config
from support.sdk import as_object, as_state
from unit.run_events import is_update, until_event

ME = Access(LOCAL_PRINCIPAL)


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AppRuntime]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(base_config()), encoding="utf-8")
    async with open_runtime(ConfigHolder(load_config(path, {})), base_dir=tmp_path) as rt:
        yield rt


async def last_checkpoint_of(runtime: AppRuntime, thread_id: str, run_id: str) -> dict[str, Any]:
    """The newest state of the thread that the run checkpointed."""
    history = await read_history(runtime, ME, thread_id, limit=1000)
    return next(s for s in history if as_object(s["metadata"] or {}).get("run_id") == run_id)


def request(**body: Any) -> RunCreate:
    text = body.pop("text", "hi")
    return RunCreate.model_validate(
        {
            "assistant_id": "echo",
            "if_not_exists": "create",
            "input": {"messages": [{"role": "human", "content": text}], **body.pop("input", {})},
            **body,
        }
    )


async def test_a_run_ends_in_success_with_its_output_and_leaves_memory(runtime: AppRuntime) -> None:
    tid = str(uuid.uuid4())
    job = await runtime.runs.create(tid, request(text="hello"), ME)
    assert runtime.runs.active(job.run_id) is job
    await job.done.wait()
    assert job.status == "success"
    assert runtime.runs.active(job.run_id) is None
    out = as_state(await runtime.runs.output(tid, job.run_id))
    assert out["messages"][-1]["content"] == "echo: hello"


async def test_a_failing_graph_ends_in_error_with_its_message(runtime: AppRuntime) -> None:
    tid = str(uuid.uuid4())
    job = await runtime.runs.create(tid, request(input={"fail": True}), ME)
    await job.done.wait()
    assert job.status == "error"
    out = as_state(await runtime.runs.output(tid, job.run_id))
    assert "requested failure" in str(out["__error__"])


async def test_enqueue_waits_for_the_run_before_it_and_counts_as_queued(
    runtime: AppRuntime,
) -> None:
    tid = str(uuid.uuid4())
    first = await runtime.runs.create(
        tid, request(input={"sleep": 60}, stream_mode=["updates"]), ME
    )
    # The echo graph's knobs are state: a later run of the thread keeps the ones the state
    # holds unless its input sets them. Set here, or the second run sleeps a minute too
    # whenever the first was cancelled after its `prepare` step checkpointed `sleep: 60`.
    second = await runtime.runs.create(
        tid, request(multitask_strategy="enqueue", input={"sleep": 0}, stream_mode=["updates"]), ME
    )
    # The executor's question at settle time: another run of the thread is still to come.
    assert runtime.runs.ex.jobs.has_queued(tid, first.run_id)
    assert second.status == "pending" and not second.done.is_set()
    # Cancel inside the window that made this test take 60 s now and then: after `prepare`.
    await until_event(runtime, first, is_update("prepare"))
    await runtime.runs.cancel(tid, first.run_id, action="interrupt", wait=True)
    assert first.status == "interrupted"
    # What the cancelled run left in the thread's state, read from its own checkpoints: the
    # thread's current values (`runs.output`) may already be the second run's, which starts
    # as soon as the first is done and, with no sleep, ends quickly (1 repetition in 200).
    assert (await last_checkpoint_of(runtime, tid, first.run_id))["values"]["sleep"] == 60
    prepared = await until_event(runtime, second, is_update("prepare"))
    assert json.loads(prepared.data)["prepare"]["sleep"] == 0
    await second.done.wait()
    assert second.status == "success"
    assert not runtime.runs.ex.jobs.has_queued(tid, second.run_id)


async def test_reject_refuses_a_second_run_while_one_is_in_flight(runtime: AppRuntime) -> None:
    tid = str(uuid.uuid4())
    first = await runtime.runs.create(tid, request(input={"sleep": 60}), ME)
    with pytest.raises(Conflict):
        await runtime.runs.create(tid, request(multitask_strategy="reject"), ME)
    await runtime.runs.cancel(tid, first.run_id, wait=True)
    assert first.status == "interrupted"


async def test_cancel_is_idempotent_and_refuses_finished_and_unknown_runs(
    runtime: AppRuntime,
) -> None:
    tid = str(uuid.uuid4())
    slow = await runtime.runs.create(tid, request(input={"sleep": 60}), ME)
    await runtime.runs.cancel(tid, slow.run_id, wait=True)
    assert slow.status == "interrupted"
    assert await runtime.runs.cancel(tid, slow.run_id) is None  # again: a no-op
    # The slow run may have checkpointed `sleep: 60` (see the enqueue test): not this one.
    done = await runtime.runs.create(tid, request(input={"sleep": 0}), ME)
    await done.done.wait()
    with pytest.raises(Conflict, match="already finished"):
        await runtime.runs.cancel(tid, done.run_id)
    with pytest.raises(NotFound):
        await runtime.runs.cancel(tid, str(uuid.uuid4()))
