"""A run executes with the config it was accepted under (issue 9 part 4).

A lead-agent run is queued behind a blocking run (one execution slot), config.yaml is
hot-reloaded to change what the model answers, the blocking run is released, and the queued
run must still answer with the model of the config it was accepted under; a run accepted
after the reload uses the new one.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state


def scripted(answer: str) -> dict[str, Any]:
    return {"name": "m", "provider": "scripted", "rules": [{"text": answer}]}


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    config = base_config(
        models=[scripted("answer from v1")],
        agent={"default_model": "m"},
        runs={"max_concurrency": 1},
    )
    srv = InProcessServer(tmp_path_factory.mktemp("snapshot"), config).start()
    try:
        yield srv
    finally:
        srv.stop()


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def until(check: Any, what: str, within: float = 60.0) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        found = await check()
        if found:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_queued_run_uses_the_config_it_was_accepted_under(server: InProcessServer) -> None:
    client = server.sdk()
    http = server.ahttp(base_url=server.url, timeout=30)

    async def status_of(tid: str, rid: str) -> str:
        return (await client.runs.get(tid, rid))["status"]

    blocker_tid = (await client.threads.create())["thread_id"]
    blocker = await client.runs.create(
        blocker_tid, "echo", input={**human("hold the slot"), "sleep": 300}
    )
    await until(
        lambda: _is(status_of(blocker_tid, blocker["run_id"]), "running"), "blocker running"
    )
    queued_tid = (await client.threads.create())["thread_id"]
    queued = await client.runs.create(queued_tid, "lead_agent", input=human("hello"))
    assert await status_of(queued_tid, queued["run_id"]) == "pending"

    before = (await http.get("/api/config/status")).json()["version_hash"]
    new_config = copy.deepcopy(server.config)
    new_config["models"] = [scripted("answer from v2")]
    server.write_config(new_config)

    async def reloaded() -> bool:
        status = (await http.get("/api/config/status")).json()
        assert status["last_error"] is None, status
        return status["version_hash"] != before

    await until(reloaded, "the config reload")
    assert await status_of(queued_tid, queued["run_id"]) == "pending"  # still behind

    await client.runs.cancel(blocker_tid, blocker["run_id"], wait=True)
    out = await client.runs.join(queued_tid, queued["run_id"])
    ai = [m["content"] for m in out["messages"] if m["type"] == "ai"]
    assert ai == ["answer from v1"]

    later = await client.runs.wait(
        (await client.threads.create())["thread_id"], "lead_agent", input=human("hello")
    )
    assert [m["content"] for m in as_state(later)["messages"] if m["type"] == "ai"] == [
        "answer from v2"
    ]
    await http.aclose()


async def _is(value: Any, wanted: str) -> bool:
    return (await value) == wanted
