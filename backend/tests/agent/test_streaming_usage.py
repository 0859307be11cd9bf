"""Tokens stream from create_agent's model node; usage reaches callbacks."""

from __future__ import annotations

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.runtime.engine.usage import UsageCounter


async def test_model_tokens_stream_in_messages_mode(tmp_path):
    model = scripted([{"text": "one two three four"}])
    graph = make_agent(tmp_path, model)
    pieces = []
    async for chunk, meta in graph.astream(user("count"), thread_config(), stream_mode="messages"):
        if meta.get("langgraph_node") == "model":
            pieces.append(chunk.content)
    assert len([p for p in pieces if p]) >= 4  # word by word, not one final message
    assert "".join(pieces) == "one two three four"
    assert model.requests[0].streamed


async def test_usage_metadata_reaches_callbacks(tmp_path):
    model = scripted(
        [
            {"tool_calls": [], "text": "a", "usage": {"input_tokens": 10, "output_tokens": 3}},
        ]
    )
    graph = make_agent(tmp_path, model)
    counter = UsageCounter()
    cfg = {**thread_config(), "callbacks": [counter]}
    await graph.ainvoke(user("x"), cfg)
    assert counter.as_dict() == {
        "input_tokens": 10,
        "output_tokens": 3,
        "total_tokens": 13,
        "llm_calls": 1,
    }
