"""``tools:`` config: enable/disable by name or group, extra tools by import path, per-tool
timeouts; a custom agent's tool groups narrow the set."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.helpers import scripted, thread_config, user
from pronghorn.agent.builder import AgentDeps, AgentParts, build_agent, default_tools
from pronghorn.agent.options import AgentOptions
from pronghorn.agent.tools.selection import ToolImportError, extra_tools, group_of, load_extra
from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.extensions import ExtraTool, ToolsConfig
from pronghorn.sandbox.local import LocalSandboxProvider


def _names(tmp_path: Path, options: AgentOptions | None = None, **tools_cfg) -> list[str]:
    config = AppConfig(data_dir=str(tmp_path), tools=ToolsConfig(**tools_cfg))
    deps = AgentDeps(sandboxes=LocalSandboxProvider(config), data_dir=tmp_path)
    return [
        t.name for t in default_tools(deps, options or AgentOptions(), vision=False, config=config)
    ]


def test_all_builtins_by_default(tmp_path):
    names = _names(tmp_path)
    assert {
        "read_file",
        "write_file",
        "bash",
        "web_fetch",
        "ask_clarification",
        "present_files",
    } <= set(names)


def test_disable_by_name_and_group(tmp_path):
    names = _names(tmp_path, disabled=["shell", "web_fetch"])
    assert "bash" not in names and "web_fetch" not in names and "read_file" in names


def test_allow_list_of_groups_and_names(tmp_path):
    names = _names(tmp_path, enabled=["file", "ask_clarification"])
    assert set(names) == {
        "read_file",
        "write_file",
        "str_replace",
        "ls",
        "glob",
        "grep",
        "view_image",
        "ask_clarification",
    }


def test_custom_agent_tool_groups(tmp_path):
    names = _names(tmp_path, AgentOptions(tool_groups=("web",)))
    assert set(names) == {"web_fetch"}  # no search provider configured: no web_search
    assert _names(tmp_path, AgentOptions(tool_groups=())) == []


def test_extra_tools_by_import_path(tmp_path):
    extra = [
        {"use": "testtools.extra:shout"},
        {"use": "testtools.extra:make_pair", "group": "numbers"},
        {"use": "testtools.extra:NOT_A_TOOL"},
        {"use": "testtools.nosuch:thing"},
    ]
    names = _names(tmp_path, extra=extra)
    assert {"shout", "one", "two"} <= set(names)
    assert _names(tmp_path, extra=extra, disabled=["numbers"]).count("one") == 0
    tools, errors = extra_tools(ToolsConfig(extra=[ExtraTool(**e) for e in extra]))
    assert {group_of(t) for t in tools} == {"custom", "numbers"}
    assert len(errors) == 2 and "not a LangChain tool" in errors[0] and "cannot import" in errors[1]
    with pytest.raises(ToolImportError):
        load_extra(ExtraTool(use="testtools.extra:NOT_A_TOOL"))


def test_bad_config_fails_validation():
    with pytest.raises(ValueError, match="module:attr"):
        ToolsConfig.model_validate({"extra": [{"use": "not a path"}]})
    with pytest.raises(ValueError, match="positive"):
        ToolsConfig(timeouts={"web_fetch": 0})


async def test_per_tool_timeout_stops_a_slow_tool(tmp_path):
    tools = load_extra(ExtraTool(use="testtools.extra:stall"))
    model = scripted(
        [{"tool_calls": [{"name": "stall", "args": {"seconds": 60}}]}, {"text": "gave up"}]
    )
    parts = AgentParts(
        model=model, model_name="s", tools=tools, data_dir=tmp_path, tool_timeouts={"stall": 0.2}
    )
    graph = build_agent(parts, AgentOptions()).copy(update={"checkpointer": InMemorySaver()})
    out = await graph.ainvoke(user("wait"), thread_config())
    tool_msg = next(m for m in out["messages"] if m.type == "tool")
    assert tool_msg.status == "error" and "timed out after 0.2s" in tool_msg.content
    assert out["messages"][-1].content == "gave up"


def test_bash_timeout_comes_from_tools_timeouts(tmp_path):
    config = AppConfig(data_dir=str(tmp_path), tools=ToolsConfig(timeouts={"bash": 7}))
    deps = AgentDeps(sandboxes=LocalSandboxProvider(config), data_dir=tmp_path)
    bash = next(
        t
        for t in default_tools(deps, AgentOptions(), vision=False, config=config)
        if t.name == "bash"
    )
    assert "killed after 7s" in bash.description
