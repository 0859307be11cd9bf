"""The sub-agent parts on their own: types, tool selection, the limit guard, the pool."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import ValidationError

from pronghorn.agent.options import AgentOptions
from pronghorn.agent.prompt import build_system_prompt
from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.subagents import SubagentsConfig
from pronghorn.subagents.limits import SubagentLimitMiddleware
from pronghorn.subagents.pool import SubagentPool
from pronghorn.subagents.specs import CustomAgent, agent_spec, configured_specs, tools_for


def _tool(name: str, group: str | None = None) -> Any:
    @tool(name)
    def t(x: str) -> str:
        """A tool."""
        return x

    if group:
        t.metadata = {"tool_group": group}
    return t


ALL = [
    _tool(n)
    for n in (
        "bash", "ls", "read_file", "write_file", "str_replace", "glob", "grep", "web_fetch",
        "present_files", "ask_clarification", "write_todos", "view_image",
    )
] + [_tool("mcp_search", "mcp")]  # fmt: skip


def names(tools: list[Any]) -> list[str]:
    return [t.name for t in tools]


def test_builtin_types_and_their_tools():
    specs = configured_specs(SubagentsConfig())
    assert set(specs) == {"general-purpose", "bash"}
    general = names(tools_for(specs["general-purpose"], [*ALL, _tool("task")]))
    assert "task" not in general and "ask_clarification" not in general
    assert "present_files" not in general and {"bash", "web_fetch", "mcp_search"} <= set(general)
    assert names(tools_for(specs["bash"], ALL)) == [
        "bash", "ls", "read_file", "write_file", "str_replace", "glob", "grep",
    ]  # fmt: skip


def test_config_types_and_overrides():
    cfg = SubagentsConfig.model_validate(
        {
            "timeout_s": 100,
            "max_turns": 7,
            "types": {
                "bash": {"timeout_s": 5},
                "reader": {
                    "description": "reads",
                    "system_prompt": "Only read.",
                    "tools": ["read_file", "ls", "ask_clarification"],
                    "model": "other",
                    "max_turns": 3,
                },
            },
        }
    )
    specs = configured_specs(cfg)
    assert specs["bash"].timeout_s == 5 and specs["bash"].max_turns == 7
    reader = specs["reader"]
    assert (reader.model, reader.max_turns, reader.timeout_s) == ("other", 3, 100)
    assert reader.system_prompt == "Only read." and reader.source == "config"
    assert names(tools_for(reader, ALL)) == ["ls", "read_file"]  # clarification never
    assert specs["general-purpose"].model is None  # inherit


@pytest.mark.parametrize(
    "bad",
    [
        {"types": {"Bad Name": {}}},
        {"types": {"x": {"max_turns": 0}}},
        {"types": {"x": {"unknown": 1}}},
        {"max_per_response": 5, "max_per_run": 2},
    ],
)
def test_bad_config_is_refused(bad: dict[str, Any]):
    with pytest.raises(ValidationError):
        AppConfig.model_validate({"subagents": bad})


def test_custom_agent_as_a_type():
    agent = CustomAgent(
        name="researcher",
        description="digs",
        system_prompt="Be terse.",
        model_name="m2",
        tool_groups=("file", "mcp"),
    )
    spec = agent_spec(agent, SubagentsConfig())
    assert spec.source == "agent" and spec.model == "m2"
    assert "<persona>\nBe terse.\n</persona>" in spec.system_prompt
    assert names(tools_for(spec, ALL)) == [
        "ls", "read_file", "write_file", "str_replace", "glob", "grep", "mcp_search",
    ]  # fmt: skip


def test_prompt_mentions_delegation_only_in_ultra_mode():
    assert "<subagents>" not in build_system_prompt(AgentOptions())
    assert "<subagents>" in build_system_prompt(AgentOptions(subagent_enabled=True))


def test_options_read_subagent_enabled():
    assert AgentOptions.from_run(context={"subagent_enabled": True}).subagent_enabled
    on = AgentOptions.from_run({"configurable": {"subagent_enabled": "true"}})
    assert on.subagent_enabled and on.key() != AgentOptions().key()


def _task(n: int) -> dict[str, Any]:
    return {"name": "task", "args": {"description": f"d{n}"}, "id": f"t{n}", "type": "tool_call"}


def _ls(n: int) -> dict[str, Any]:
    return {"name": "ls", "args": {}, "id": f"l{n}", "type": "tool_call"}


def guard(state: list[Any], per_response: int = 2, per_run: int = 3) -> dict[str, Any] | None:
    mw = SubagentLimitMiddleware(max_per_response=per_response, max_per_run=per_run)
    return mw.after_model({"messages": state}, None)  # type: ignore[arg-type]


def test_guard_leaves_calls_within_limits_alone():
    assert guard([HumanMessage("go"), AIMessage("", tool_calls=[_task(1), _task(2)])]) is None
    assert guard([HumanMessage("go"), AIMessage("hi")]) is None


def test_guard_truncates_per_response_and_keeps_other_tools():
    msg = AIMessage("Working.", id="a1", tool_calls=[_task(1), _ls(1), _task(2), _task(3)])
    out = guard([HumanMessage("go"), msg])
    assert out is not None
    (updated,) = out["messages"]
    assert updated.id == "a1"
    assert [c["id"] for c in updated.tool_calls] == ["t1", "l1", "t2"]
    assert updated.content.startswith("Working.\n\n[Sub-agent limit: 1 task call(s) not run")
    assert "at most 2 per response" in updated.content and "'d3'" in updated.content
    assert updated.additional_kwargs["subagent_calls_dropped"] == 1


def test_guard_counts_the_run_since_the_last_user_message():
    earlier = [
        HumanMessage("old"),
        AIMessage("", tool_calls=[_task(1), _task(2)]),
        ToolMessage("r", tool_call_id="t1"),
        ToolMessage("r", tool_call_id="t2"),
    ]
    turn1 = AIMessage("", tool_calls=[_task(3), _task(4)])
    # a new user message: the old turn's calls do not count
    assert guard([*earlier, HumanMessage("new"), turn1]) is None
    # the same run: 2 already, room for 1 of the 2
    out = guard([*earlier, turn1])
    assert out is not None
    (updated,) = out["messages"]
    assert [c["id"] for c in updated.tool_calls] == ["t3"]
    assert "at most 3 per run" in updated.content
    # no room at all: every task call goes, the list-content form keeps its blocks
    full = [*earlier, AIMessage("", tool_calls=[_task(5)]), ToolMessage("r", tool_call_id="t5")]
    blocks = AIMessage([{"type": "text", "text": "x"}], tool_calls=[_task(6)])
    out = guard([*full, blocks])
    assert out is not None
    (updated,) = out["messages"]
    assert updated.tool_calls == [] and updated.content[0] == {"type": "text", "text": "x"}


async def test_pool_limits_queues_in_order_and_resizes():
    pool = SubagentPool(1)
    order: list[str] = []
    gate = asyncio.Event()

    async def job(name: str) -> None:
        async with pool.slot():
            order.append(name)
            await gate.wait()

    first = asyncio.create_task(job("a"))
    await asyncio.sleep(0)
    rest = [asyncio.create_task(job(n)) for n in ("b", "c")]
    await asyncio.sleep(0)
    assert order == ["a"] and pool.waiting == 2 and not pool.has_room()
    pool.resize(2)  # one more slot: "b" starts now
    await asyncio.sleep(0)
    assert order == ["a", "b"] and pool.running == 2
    gate.set()
    await asyncio.gather(first, *rest)
    assert order == ["a", "b", "c"] and pool.running == 0 and pool.has_room()


async def test_pool_cancelled_waiter_gives_its_place_back():
    pool = SubagentPool(1)
    hold = asyncio.Event()

    async def holder() -> None:
        async with pool.slot():
            await hold.wait()

    h = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(holder())
    await asyncio.sleep(0)
    assert pool.waiting == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert pool.waiting == 0
    hold.set()
    await h
    assert pool.running == 0


class _Settings:
    def __init__(self) -> None:
        self.listeners: list[Any] = []

    def add_listener(self, fn: Any) -> None:
        self.listeners.append(fn)


async def test_component_puts_the_pool_on_the_runtime_and_resizes_on_reload():
    from types import SimpleNamespace

    from pronghorn.runtime.wiring.components.core import subagents

    settings = _Settings()
    old = AppConfig.model_validate({"subagents": {"max_concurrent": 2}})
    skills = object()
    runtime = SimpleNamespace(config=old, settings=settings, db=None, skills=skills)
    async with subagents(runtime):  # type: ignore[arg-type]
        pool = runtime.subagents
        assert isinstance(pool, SubagentPool) and pool.limit == 2
        assert pool.directory is not None and pool.skills is skills
        for fn in settings.listeners:
            fn(old, AppConfig.model_validate({"subagents": {"max_concurrent": 5}}))
        assert pool.limit == 5
