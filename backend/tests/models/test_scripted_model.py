"""ScriptedChatModel: steps, streaming, tool-call chunks, usage, errors, rules, recording."""

from __future__ import annotations

import asyncio
import time

import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import ValidationError

from pronghorn.models import ScriptedModelError, ScriptExhaustedError
from support.scripted import scripted_model


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def collect(model, messages, **kw) -> list[AIMessageChunk]:
    return [c async for c in model.astream(messages, **kw)]


def merged(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    out = chunks[0]
    for c in chunks[1:]:
        out = out + c
    return out


async def test_text_step_invoke_has_usage_and_finish_reason():
    model = scripted_model(script=[{"text": "Hello there, world."}])
    msg = await model.ainvoke([HumanMessage("hi")])
    assert isinstance(msg, AIMessage)
    assert msg.content == "Hello there, world."
    assert msg.response_metadata["finish_reason"] == "stop"
    usage = msg.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


async def test_text_streams_word_by_word_in_order():
    model = scripted_model(script=[{"text": "one two three four"}])
    chunks = await collect(model, [HumanMessage("hi")])
    texts = [c.content for c in chunks if c.content]
    assert texts == ["one ", "two ", "three ", "four"]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    last = chunks[-1]
    assert last.chunk_position == "last"
    assert last.usage_metadata is not None
    assert last.response_metadata["finish_reason"] == "stop"
    assert merged(chunks).content == "one two three four"


async def test_chunk_delay_paces_the_stream():
    model = scripted_model(script=[{"text": "a b c d e f", "delay_s": 0.03}])
    started = time.monotonic()
    stamps = []
    async for _ in model.astream([HumanMessage("hi")]):
        stamps.append(time.monotonic() - started)
    assert stamps[-1] >= 0.03 * 5
    assert stamps[0] < 0.5


async def test_tool_call_chunks_assemble_into_valid_tool_calls():
    step = {
        "text": "Let me add.",
        "tool_calls": [
            {"name": "add", "args": {"a": 12345, "b": 67890}},
            {"name": "add", "args": {"a": 1, "b": 2}},
        ],
    }
    model = scripted_model(script=[step])
    chunks = await collect(model.bind_tools([add]), [HumanMessage("add")])
    pieces = [c for c in chunks if c.tool_call_chunks]
    assert len(pieces) > 4  # args arrive in several pieces
    assert any(tc["args"] and tc["name"] is None for c in pieces for tc in c.tool_call_chunks)
    full = merged(chunks)
    assert [tc["args"] for tc in full.tool_calls] == [{"a": 12345, "b": 67890}, {"a": 1, "b": 2}]
    assert full.invalid_tool_calls == []
    ids = [tc["id"] for tc in full.tool_calls]
    assert len(set(ids)) == 2 and all(ids)
    assert full.response_metadata["finish_reason"] == "tool_calls"
    assert full.content == "Let me add."


async def test_tool_call_ids_are_unique_per_call():
    model = scripted_model(fallback={"tool_calls": [{"name": "add", "args": {"a": 1, "b": 1}}]})
    a = await model.ainvoke([HumanMessage("x")])
    b = await model.ainvoke([HumanMessage("x")])
    assert a.tool_calls[0]["id"] != b.tool_calls[0]["id"]
    fixed = scripted_model(fallback={"tool_calls": [{"name": "add", "id": "call_fixed"}]})
    assert (await fixed.ainvoke("x")).tool_calls[0]["id"] == "call_fixed"


async def test_reasoning_usage_and_custom_finish_reason():
    step = {
        "text": "",
        "reasoning": "thinking it over carefully",
        "finish_reason": "content_filter",
        "usage": {"input_tokens": 100, "output_tokens": 7},
    }
    model = scripted_model(script=[step, step])
    msg = await model.ainvoke([HumanMessage("q")])
    assert msg.additional_kwargs["reasoning_content"] == "thinking it over carefully"
    assert msg.response_metadata["finish_reason"] == "content_filter"
    assert msg.usage_metadata is not None and msg.usage_metadata["input_tokens"] == 100
    assert msg.usage_metadata["total_tokens"] == 107
    chunks = await collect(model, [HumanMessage("q"), msg])
    reasoning = [c.additional_kwargs["reasoning_content"] for c in chunks if c.additional_kwargs]
    assert len(reasoning) == 4
    assert merged(chunks).additional_kwargs["reasoning_content"] == "thinking it over carefully"


async def test_errors_look_like_provider_errors():
    model = scripted_model(script=[{"raise": "rate_limit", "times": None}])
    with pytest.raises(openai.RateLimitError) as info:
        await model.ainvoke([HumanMessage("x")])
    assert info.value.status_code == 429
    with pytest.raises(openai.RateLimitError):
        await collect(model, [HumanMessage("x")])
    generic = scripted_model(script=[{"raise": "kaboom", "message": "it broke", "times": None}])
    with pytest.raises(ScriptedModelError, match="it broke"):
        await generic.ainvoke("x")


async def test_error_then_success_on_retry_of_the_same_turn():
    model = scripted_model(
        script=[{"raise": "rate_limit", "times": 2}, {"text": "finally"}, {"text": "second turn"}]
    )
    history = [HumanMessage("hi")]
    for _ in range(2):
        with pytest.raises(openai.RateLimitError):
            await model.ainvoke(history)
    first = await model.ainvoke(history)
    assert first.content == "finally"
    second = await model.ainvoke([*history, first, HumanMessage("again")])
    assert second.content == "second turn"


async def test_dropped_stream_raises_after_some_chunks():
    model = scripted_model(
        script=[{"text": "a b c d e", "raise": "connection", "raise_after_chunks": 2}]
    )
    got = []
    with pytest.raises(openai.APIConnectionError):
        async for c in model.astream("x"):
            got.append(c)
    assert [c.content for c in got] == ["a ", "b "]


async def test_script_cursor_is_per_conversation():
    model = scripted_model(script=[{"text": "first"}, {"text": "second"}])

    async def conversation() -> list[str]:
        history = [HumanMessage("hello")]
        out = []
        for _ in range(2):
            msg = await model.ainvoke(history)
            out.append(msg.content)
            history += [msg, HumanMessage("more")]
        return out

    results = await asyncio.gather(*(conversation() for _ in range(3)))
    assert results == [["first", "second"]] * 3
    with pytest.raises(ScriptExhaustedError):
        await model.ainvoke([HumanMessage("a"), AIMessage("1"), AIMessage("2")])


async def test_calls_cursor_counts_per_thread_id():
    model = scripted_model(script=[{"text": "one"}, {"text": "two"}], cursor="calls")
    cfg_a: RunnableConfig = {"configurable": {"thread_id": "A"}, "metadata": {"thread_id": "A"}}
    cfg_b: RunnableConfig = {"configurable": {"thread_id": "B"}, "metadata": {"thread_id": "B"}}
    assert (await model.ainvoke("x", config=cfg_a)).content == "one"
    assert (await model.ainvoke("x", config=cfg_b)).content == "one"
    assert (await model.ainvoke("x", config=cfg_a)).content == "two"
    assert [r.thread_id for r in model.requests] == ["A", "B", "A"]


async def test_rules_match_last_human_message_and_play_steps():
    model = scripted_model(
        rules=[
            {"match": ["weather", "forecast"], "steps": [
                {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]},
                {"text": "It is sunny."},
            ]},
            {"regex": r"^\d+$", "text": "a number"},
            {"text": "fallback rule"},
        ]
    )  # fmt: skip
    first = await model.ainvoke([HumanMessage("What's the WEATHER?")])
    assert first.tool_calls[0]["name"] == "add"
    result = ToolMessage("3", tool_call_id=first.tool_calls[0]["id"])
    second = await model.ainvoke([HumanMessage("What's the WEATHER?"), first, result])
    assert second.content == "It is sunny."
    assert (await model.ainvoke([HumanMessage("42")])).content == "a number"
    assert (await model.ainvoke([HumanMessage("other")])).content == "fallback rule"


async def test_requests_and_bound_tools_are_recorded():
    model = scripted_model(fallback={"text": "ok"})
    bound = model.bind_tools([add], tool_choice="auto")
    await bound.ainvoke([HumanMessage("hi")], temperature=0.5)
    assert model.bound_tools[0][0]["function"]["name"] == "add"
    req = model.requests[0]
    assert req.tool_names == ["add"]
    assert req.kwargs["tool_choice"] == "auto"
    assert req.kwargs["temperature"] == 0.5
    assert req.last_human_text == "hi"
    assert req.step is not None and req.step.text == "ok"
    assert not req.streamed
    model.invoke("sync works too")
    assert [c.content for c in model.stream("sync") if c.content] == ["ok"]
    assert len(model.requests) == 3 and model.requests[2].streamed


def test_invalid_steps_fail_when_the_model_is_built():
    with pytest.raises(ValidationError):
        scripted_model(script=[{"txt": "typo"}])
    with pytest.raises(ValidationError):
        scripted_model(rules=[{"regex": "(unclosed", "text": "x"}])
