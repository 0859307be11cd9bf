from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user


@tool
def poll(job: str) -> str:
    """Check a job."""
    return "still running"


async def test_repeated_calls_warn_then_stop(tmp_path):
    same = {"tool_calls": [{"name": "poll", "args": {"job": "42"}}]}
    model = scripted([], fallback=same)
    graph = make_agent(tmp_path, model, [poll], loop_warn_repeats=3, loop_stop_repeats=5)
    out = await graph.ainvoke(user("wait for job 42"), thread_config())
    last = out["messages"][-1]
    assert isinstance(last, AIMessage) and not last.tool_calls
    assert "Stopped" in last.content and last.additional_kwargs["loop_stopped"]["repeats"] == 5
    assert len(model.requests) == 5
    assert sum(isinstance(m, ToolMessage) for m in out["messages"]) == 4
    systems = [r.messages[0].content for r in model.requests]
    assert not any("loop_warning" in s for s in systems[:3])
    assert "loop_warning" in systems[3] and "loop_warning" in systems[4]


async def test_varied_calls_are_fine(tmp_path):
    steps = [{"tool_calls": [{"name": "poll", "args": {"job": str(i)}}]} for i in range(6)]
    model = scripted([*steps, {"text": "done"}])
    graph = make_agent(tmp_path, model, [poll], loop_warn_repeats=3, loop_stop_repeats=5)
    out = await graph.ainvoke(user("poll all"), thread_config())
    assert out["messages"][-1].content == "done"
    assert not any("loop_warning" in r.messages[0].content for r in model.requests)
