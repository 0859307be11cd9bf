from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.builder import PHASES, AgentParts, middleware_phases
from pronghorn.agent.options import AgentOptions


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echoed: {text}"


async def test_tool_loop_and_state(tmp_path):
    model = scripted(
        [
            {"tool_calls": [{"name": "echo", "args": {"text": "hi"}}]},
            {"text": "all done"},
        ]
    )
    graph = make_agent(tmp_path, model, [echo])
    cfg = thread_config()
    out = await graph.ainvoke(user("please echo hi"), cfg)
    msgs = out["messages"]
    assert isinstance(msgs[-1], AIMessage) and msgs[-1].content == "all done"
    assert any(isinstance(m, ToolMessage) and m.content == "echoed: hi" for m in msgs)
    assert out["title"] == "please echo hi"
    assert out["thread_data"]["outputs_path"] == "/mnt/user-data/outputs"
    # the system prompt carries the layout and the bound tool
    first = model.requests[0]
    assert "/mnt/user-data/outputs" in first.messages[0].content
    assert first.tool_names == ["echo"]


def test_phases_are_named_and_ordered(tmp_path):
    parts = AgentParts(model=scripted([]), model_name="s", tools=[], data_dir=tmp_path)
    phases = middleware_phases(parts, AgentOptions())
    assert tuple(name for name, _ in phases) == PHASES
    names = [type(m).__name__ for _, group in phases for m in group]
    assert names.index("ThreadDataMiddleware") < names.index("SandboxMiddleware")
    assert names.index("ToolOutputBudgetMiddleware") < names.index("ToolErrorMiddleware")


def test_plan_mode_prompt():
    from pronghorn.agent.prompt import build_system_prompt

    assert "write_todos" in build_system_prompt(AgentOptions(is_plan_mode=True))
    assert "plan_mode" not in build_system_prompt(AgentOptions())
    assert "str_replace" in build_system_prompt(AgentOptions())
