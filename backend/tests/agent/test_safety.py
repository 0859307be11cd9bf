from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from agent.helpers import make_agent, scripted, thread_config, user


@tool
def risky(x: str) -> str:
    """Do something."""
    raise AssertionError("must not run")


async def test_content_filter_strips_tool_calls_and_emits_event(tmp_path):
    model = scripted(
        [
            {
                "text": "partial",
                "tool_calls": [{"name": "risky", "args": {"x": "1"}}],
                "finish_reason": "content_filter",
            }
        ]
    )
    graph = make_agent(tmp_path, model, [risky])
    events = []
    final = None
    async for mode, chunk in graph.astream(
        user("do it"), thread_config(), stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    assert events == [
        {"type": "safety_stop", "reason": "content_filter", "suppressed_tools": ["risky"]}
    ]
    assert final is not None
    last = final["messages"][-1]
    assert isinstance(last, AIMessage) and not last.tool_calls
    assert last.additional_kwargs["safety_stop"]["reason"] == "content_filter"
    assert isinstance(last.content, str) and last.content.startswith("partial")


async def test_refusal_without_tools_passes_through(tmp_path):
    model = scripted([{"text": "I can't help", "response_metadata": {"stop_reason": "refusal"}}])
    graph = make_agent(tmp_path, model)
    out = await graph.ainvoke(user("x"), thread_config())
    assert out["messages"][-1].content == "I can't help"
