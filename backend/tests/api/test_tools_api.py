"""``GET /api/tools`` and the ``tools:`` config on a live app: extra tools by import path,
import errors reported, and a hot reload changes the next run's tool set."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

ECHO = {"name": "echo", "provider": "support.echo_model:PromptEchoModel"}


@pytest.fixture
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    cfg = base_config(
        models=[ECHO],
        agent={"default_model": "echo"},
        sandbox={"isolation": "none"},
        tools={
            "disabled": ["web"],
            "extra": [{"use": "testtools.extra:shout"}, {"use": "testtools.nosuch:x"}],
            "timeouts": {"shout": 5},
        },
    )
    server = InProcessServer(tmp_path_factory.mktemp("tools"), cfg).start(timeout=120)
    yield server
    server.stop()


async def _tools_of_a_run(server: InProcessServer) -> list[str]:
    client = server.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "human", "content": "hi"}]}
    )
    return json.loads(as_state(out)["messages"][-1]["content"])["tools"]


async def until(check: Any, what: str, within: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_tools_listing_and_hot_reload(srv: InProcessServer):
    async with srv.ahttp() as http:
        body = (await http.get("/api/tools")).json()
        tools = {t["name"]: t for t in body["tools"]}
        assert tools["web_fetch"]["group"] == "web" and tools["web_fetch"]["enabled"] is False
        assert tools["bash"]["group"] == "shell" and tools["bash"]["enabled"] is True
        assert tools["shout"] == {
            "name": "shout",
            "group": "custom",
            "description": "Repeat the text in capitals.",
            "enabled": True,
            "source": "testtools.extra:shout",
            "timeout_s": 5,
        }
        assert body["disabled"] == ["web"] and body["enabled"] is None
        assert len(body["errors"]) == 1 and "testtools.nosuch:x" in body["errors"][0]
        assert {"file", "shell", "web", "interaction", "custom"} <= set(body["groups"])

        names = await _tools_of_a_run(srv)
        assert "shout" in names and "bash" in names and "web_fetch" not in names

        before = (await http.get("/api/config/status")).json()["version_hash"]
        new = copy.deepcopy(srv.config)
        new["tools"] = {"disabled": ["shell", "shout"]}
        srv.write_config(new)

        async def reloaded() -> bool:
            status = (await http.get("/api/config/status")).json()
            assert status["last_error"] is None, status
            return status["version_hash"] != before

        await until(reloaded, "the config reload")
        names = await _tools_of_a_run(srv)
        assert "bash" not in names and "shout" not in names and "web_fetch" in names
        tools = {t["name"]: t for t in (await http.get("/api/tools")).json()["tools"]}
        assert tools["bash"]["enabled"] is False and "shout" not in tools
