from __future__ import annotations

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user


@tool
def explode(what: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot handle {what}")


async def test_tool_exception_becomes_an_error_tool_message(tmp_path):
    model = scripted(
        [
            {"tool_calls": [{"name": "explode", "args": {"what": "this"}}]},
            {"text": "I saw the error and recovered"},
        ]
    )
    graph = make_agent(tmp_path, model, [explode])
    out = await graph.ainvoke(user("go"), thread_config())
    err = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert err.status == "error"
    assert err.content == "Error: ValueError: cannot handle this"
    assert out["messages"][-1].content == "I saw the error and recovered"
    # the model got to read it
    assert any(
        isinstance(m, ToolMessage) and "cannot handle" in m.content
        for m in model.requests[-1].messages
    )


async def test_unknown_tool_is_reported_to_the_model(tmp_path):
    model = scripted([{"tool_calls": [{"name": "nope", "args": {}}]}, {"text": "ok"}])
    graph = make_agent(tmp_path, model, [explode])
    out = await graph.ainvoke(user("go"), thread_config())
    err = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert err.status == "error" and "nope" in err.content
