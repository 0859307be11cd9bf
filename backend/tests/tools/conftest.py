"""Fixtures for the tool tests: real LocalSandboxProvider in a temp data dir, and a helper
that calls a tool the way LangChain's ToolNode does (a tool call with a ToolRuntime)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from pronghorn.agent.tools import ToolDeps, build_tools
from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import LocalSandboxProvider, ThreadPaths


@dataclass
class ToolKit:
    deps: ToolDeps
    thread_id: str
    tools: dict[str, BaseTool] = field(default_factory=dict)

    @property
    def paths(self) -> ThreadPaths:
        return ThreadPaths.for_thread(self.deps.data_dir, "default", self.thread_id)

    def runtime(self, call_id: str, state: dict[str, Any] | None = None) -> ToolRuntime:
        return ToolRuntime(
            state=state or {"messages": []},
            context=None,
            config={"configurable": {"thread_id": self.thread_id, "user_id": "default"}},
            stream_writer=lambda _: None,
            tool_call_id=call_id,
            store=None,
        )

    async def call(self, name: str, **args: Any) -> ToolMessage | Command:
        """Invoke a tool with a ToolCall dict, as the agent's ToolNode does."""
        call_id = f"call-{uuid.uuid4().hex[:8]}"
        payload = {**args, "runtime": self.runtime(call_id)}
        return await self.tools[name].ainvoke(
            {"type": "tool_call", "id": call_id, "name": name, "args": payload}
        )

    async def text(self, name: str, **args: Any) -> str:
        result = await self.call(name, **args)
        assert isinstance(result, ToolMessage), result
        assert result.status == "success", result.content
        return str(result.content)

    async def error(self, name: str, **args: Any) -> str:
        result = await self.call(name, **args)
        assert isinstance(result, ToolMessage), result
        assert result.status == "error", result.content
        assert str(result.content).startswith("Error: ")
        return str(result.content)


MakeKit = Callable[..., ToolKit]


@pytest.fixture
def make_kit(tmp_path: Path) -> MakeKit:
    def make(*, vision: bool = False, search: Any = None, **config: Any) -> ToolKit:
        sandbox = {"isolation": "none", "command_timeout_s": 10, **config.pop("sandbox", {})}
        cfg = AppConfig.model_validate(
            {"data_dir": str(tmp_path / "data"), "sandbox": sandbox, **config}
        )
        deps = ToolDeps(
            sandboxes=LocalSandboxProvider(cfg),
            config=cfg,
            data_dir=(tmp_path / "data").resolve(),
            search=search,
            vision=vision,
        )
        kit = ToolKit(deps=deps, thread_id=str(uuid.uuid4()))
        kit.tools = {t.name: t for t in build_tools(deps)}
        return kit

    return make


@pytest.fixture
def kit(make_kit: MakeKit) -> ToolKit:
    return make_kit()
