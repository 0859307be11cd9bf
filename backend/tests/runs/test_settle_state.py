"""The thread's cached values when a run ends: taken from the run's own stream when it can
vouch for them (no checkpoint read), read back from the checkpoint otherwise (interrupts,
static breakpoints, an output schema narrower than the state). In-process runtime."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.runnables import RunnableConfig

from pronghorn.auth.principal import LOCAL_PRINCIPAL
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.graphs.requests import GraphRequest
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.engine.state import thread_values_and_interrupts
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.runtime.wiring.assemble import open_runtime
from support.live import base_config


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AppRuntime]:
    config = base_config(graphs={"narrow": "testgraphs.narrow_output:graph"})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    async with open_runtime(ConfigHolder(load_config(path, {})), base_dir=tmp_path) as rt:
        yield rt


class ReadCounter:
    """Counts the checkpointer's latest-checkpoint reads (a spy around the real saver)."""

    def __init__(self, runtime: AppRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        saver = runtime.checkpointer
        real = saver.aget_tuple

        async def counted(config: Any) -> Any:
            self.count += 1
            return await real(config)

        monkeypatch.setattr(saver, "aget_tuple", counted)


async def run(runtime: AppRuntime, tid: str, body: dict[str, Any]) -> dict[str, Any]:
    req = RunCreate.model_validate({"if_not_exists": "create", **body})
    job = await runtime.runs.create(tid, req, Access(LOCAL_PRINCIPAL))
    await job.done.wait()
    thread = await runtime.db.read(lambda conn: threads_repo.get_row(conn, tid))
    assert thread is not None
    return dataclasses.asdict(thread)


async def checkpoint_cache(runtime: AppRuntime, graph_id: str, tid: str) -> Any:
    """What the thread row would cache if read back from the checkpoint."""
    config: RunnableConfig = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    request = GraphRequest(access="threads.read", config=config)  # type: ignore[arg-type]
    async with runtime.graphs.graph(graph_id, request) as graph:
        snapshot = await graph.aget_state(config)
    return thread_values_and_interrupts(snapshot)


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_a_plain_run_caches_the_streamed_state_without_reading_it_back(
    runtime: AppRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = ReadCounter(runtime, monkeypatch)
    tid = str(uuid.uuid4())
    for turn in ("one", "two"):
        before = reads.count
        thread = await run(runtime, tid, {"assistant_id": "echo", "input": human(turn)})
        # LangGraph reads the latest checkpoint once to start the run; nothing after it
        assert reads.count - before == 1
        assert thread["status"] == "idle"
        assert [m["content"] for m in thread["values"]["messages"]][-1] == f"echo: {turn}"
    values, interrupts = await checkpoint_cache(runtime, "echo", tid)
    assert thread["values"] == values and thread["interrupts"] == interrupts == {}


async def test_interrupts_breakpoints_and_narrow_outputs_read_the_checkpoint(
    runtime: AppRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = ReadCounter(runtime, monkeypatch)
    cases = [
        ("echo", {"input": {**human("ask"), "interrupt": True}}, "interrupted"),
        ("echo", {"input": human("stop"), "interrupt_after": ["prepare"]}, "interrupted"),
        ("narrow", {"input": {"question": "why"}}, "idle"),
    ]
    for graph_id, body, status in cases:
        tid = str(uuid.uuid4())
        before = reads.count
        thread = await run(runtime, tid, {"assistant_id": graph_id, **body})
        assert reads.count - before == 2, graph_id  # the run's start, and the settle
        assert thread["status"] == status
        values, interrupts = await checkpoint_cache(runtime, graph_id, tid)
        assert thread["values"] == values
        assert thread["interrupts"] == interrupts
    assert thread["values"]["scratch"] == "thinking about why"  # the state, not the output
