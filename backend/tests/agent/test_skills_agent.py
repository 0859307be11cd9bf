"""The lead agent with skills: the prompt section the model receives, slash activation
(body injected for the turn) and the allowed-tools clamp; a custom agent's persona."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from agent.helpers import scripted, thread_config, user
from pronghorn.agent.builder import AgentParts, build_agent
from pronghorn.agent.options import AgentOptions
from pronghorn.skills.model import RunSkill
from skills.kit import skill_md, write_skill


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool
def bash(command: str) -> str:
    """Run a command."""
    return f"ran {command}"


def _skill(tmp_path: Path, name: str, allowed: tuple[str, ...] | None = None) -> RunSkill:
    folder = write_skill(
        tmp_path / "skills",
        name,
        skill_md(name, f"Helps with {name} work.") + "Use the SECRET-RECIPE.\n",
    )
    return RunSkill(
        name=name,
        description=f"Helps with {name} work.",
        location=f"/mnt/skills/public/{name}/SKILL.md",
        skill_file=folder / "SKILL.md",
        allowed_tools=allowed,
    )


def _agent(
    tmp_path: Path, model: Any, skills: list[RunSkill], options: AgentOptions | None = None
) -> Any:
    parts = AgentParts(
        model=model,
        model_name="scripted",
        tools=[read_file, bash],
        data_dir=tmp_path,
        skills=tuple(skills),
    )
    graph = build_agent(parts, options or AgentOptions())
    return graph.copy(update={"checkpointer": InMemorySaver()})


def _system(request: Any) -> str:
    return request.messages[0].content


async def test_prompt_lists_enabled_skills_for_progressive_loading(tmp_path):
    model = scripted([{"text": "ok"}])
    graph = _agent(tmp_path, model, [_skill(tmp_path, "charts"), _skill(tmp_path, "pdf-tools")])
    await graph.ainvoke(user("hello"), thread_config())
    system = _system(model.requests[0])
    assert "<skill_system>" in system
    assert (
        "<skill><name>charts</name><description>Helps with charts work.</description>"
        "<location>/mnt/skills/public/charts/SKILL.md</location></skill>"
    ) in system
    assert "pdf-tools" in system and "read_file" in system
    assert "SECRET-RECIPE" not in system  # bodies are loaded on demand, not listed


async def test_no_skills_no_section(tmp_path):
    model = scripted([{"text": "ok"}])
    await _agent(tmp_path, model, []).ainvoke(user("hello"), thread_config())
    assert "<skill_system>" not in _system(model.requests[0])


async def test_slash_activation_injects_the_body_for_the_turn_only(tmp_path):
    model = scripted(
        [
            {"tool_calls": [{"name": "read_file", "args": {"path": "a.txt"}}]},
            {"text": "done with the skill"},
            {"text": "plain answer"},
        ]
    )
    graph = _agent(tmp_path, model, [_skill(tmp_path, "charts")])
    cfg = thread_config()
    await graph.ainvoke(user("/charts plot the sales"), cfg)
    first, second = model.requests[0], model.requests[1]
    for request in (first, second):  # every model call of the turn
        assert '<active_skill name="charts"' in _system(request)
        assert "Use the SECRET-RECIPE." in _system(request)
    assert set(first.tool_names) == {"read_file", "bash"}  # no allowed-tools: no clamp
    await graph.ainvoke(user("thanks"), cfg)
    assert "<active_skill" not in _system(model.requests[2])


async def test_unknown_and_reserved_commands_do_nothing(tmp_path):
    model = scripted([{"text": "a"}, {"text": "b"}])
    graph = _agent(tmp_path, model, [_skill(tmp_path, "charts")])
    cfg = thread_config()
    await graph.ainvoke(user("/nosuch do it"), cfg)
    await graph.ainvoke(user("/help"), cfg)
    assert all("<active_skill" not in _system(r) for r in model.requests)


async def test_allowed_tools_clamp_while_active(tmp_path):
    model = scripted(
        [
            {"tool_calls": [{"name": "bash", "args": {"command": "rm x"}}]},
            {"tool_calls": [{"name": "read_file", "args": {"path": "a.txt"}}]},
            {"text": "done"},
        ]
    )
    graph = _agent(tmp_path, model, [_skill(tmp_path, "reader", allowed=("read_file",))])
    out = await graph.ainvoke(user("/reader look at a.txt"), thread_config())
    assert model.requests[0].tool_names == ["read_file"]  # the model is offered only these
    assert "you may use only these tools: read_file" in _system(model.requests[0])
    tools = [m for m in out["messages"] if m.type == "tool"]
    assert tools[0].name == "bash" and tools[0].status == "error"
    assert "allows only these tools: read_file" in tools[0].content  # a call anyway: refused
    assert tools[1].content == "contents of a.txt" and tools[1].status != "error"


async def test_custom_agent_persona_is_in_the_prompt(tmp_path):
    model = scripted([{"text": "ok"}])
    options = AgentOptions(
        agent_name="sql-helper", description="Writes SQL", system_prompt="You only speak SQL."
    )
    await _agent(tmp_path, model, [], options).ainvoke(user("hi"), thread_config())
    system = _system(model.requests[0])
    assert "custom agent 'sql-helper'" in system and "You only speak SQL." in system
    assert "Purpose: Writes SQL" in system


def test_options_read_the_custom_agent_fields():
    opts = AgentOptions.from_run(
        {"configurable": {"skills": ["a"]}},
        {
            "agent_name": "x",
            "system_prompt": "Be brief.",
            "tool_groups": ["file", "web"],
            "mcp_servers": [],
            "subagent_enabled": "true",
        },
    )
    assert opts.agent_name == "x" and opts.system_prompt == "Be brief."
    assert opts.tool_groups == ("file", "web") and opts.skills == ("a",)
    assert opts.mcp_servers == () and opts.subagent_enabled is True
    assert hash(opts.key()) == hash(
        AgentOptions.from_run(
            None,
            {
                "agent_name": "x",
                "system_prompt": "Be brief.",
                "tool_groups": ["file", "web"],
                "skills": ["a"],
                "mcp_servers": [],
                "subagent_enabled": True,
            },
        ).key()
    )
    assert AgentOptions.from_run(None, {}).tool_groups is None


async def test_a_skill_removed_mid_conversation_does_not_fail_the_run(tmp_path):
    skill = _skill(tmp_path, "gone")
    skill.skill_file.unlink()
    model = scripted([{"text": "still fine"}])
    out = await _agent(tmp_path, model, [skill]).ainvoke(user("/gone now"), thread_config())
    assert out["messages"][-1].content == "still fine"
    assert "cannot be read right now: FileNotFoundError" in _system(model.requests[0])
