"""DeepSeek-style ``reasoning_content``: kept on the AI message, sent back within a turn.

The factory's ``openai`` client talks HTTP to the local fake server, which streams
``delta.reasoning_content`` before the answer (and returns ``message.reasoning_content``
when the request does not stream).
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from fakes.openai_server import FakeOpenAIServer, Reply
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory
from pronghorn.models.notes import NOTE_KEY

THOUGHT = "The user greets me, so I should greet back politely."


def make(server: FakeOpenAIServer, **entry):
    cfg = {
        "name": "ds",
        "provider": "openai",
        "model": "deepseek-chat",
        "base_url": server.base_url,
        "api_key": "sk-test",
        **entry,
    }
    return ModelFactory(AppConfig.model_validate({"models": [cfg]}), env={}).create("ds")


async def test_streamed_reasoning_deltas_are_kept(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.text("Hello there!", reasoning=THOUGHT))
    chunks = [c async for c in make(fake_openai).astream([HumanMessage("hi")])]
    pieces = [c.additional_kwargs["reasoning_content"] for c in chunks if c.additional_kwargs]
    assert len(pieces) > 3  # streamed piece by piece, before the answer
    full = chunks[0]
    for c in chunks[1:]:
        full = full + c
    assert full.additional_kwargs["reasoning_content"] == THOUGHT
    assert full.content == "Hello there!"
    assert fake_openai.requests[0].body["stream"] is True


async def test_invoke_keeps_the_whole_reasoning(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.text("Hi!", reasoning=THOUGHT))
    msg = await make(fake_openai).ainvoke("hi")
    assert msg.additional_kwargs["reasoning_content"] == THOUGHT and msg.content == "Hi!"


async def test_non_streamed_message_reasoning_is_kept(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.text("Hi!", reasoning=THOUGHT))
    msg = await make(fake_openai, options={"streaming": False}).ainvoke("hi")
    assert fake_openai.requests[0].body.get("stream") is not True
    assert msg.additional_kwargs["reasoning_content"] == THOUGHT and msg.content == "Hi!"


async def test_no_reasoning_no_field(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.text("plain"))
    msg = await make(fake_openai).ainvoke("hi")
    assert "reasoning_content" not in msg.additional_kwargs
    fake_openai.queue(Reply.text("again"))
    await make(fake_openai).ainvoke([HumanMessage("hi"), msg, HumanMessage("more")])
    assert "reasoning_content" not in fake_openai.requests[1].body["messages"][1]


async def test_reasoning_goes_back_with_the_current_turn_only(fake_openai: FakeOpenAIServer):
    call = {"name": "lookup", "args": {"q": "x"}, "id": "call_1", "type": "tool_call"}
    earlier = AIMessage("Earlier answer.", additional_kwargs={"reasoning_content": "old"})
    calling = AIMessage("", tool_calls=[call], additional_kwargs={"reasoning_content": "need x"})
    fake_openai.queue(Reply.text("Done."))
    await make(fake_openai).ainvoke(
        [
            HumanMessage("first question"),
            earlier,
            HumanMessage("second question"),
            calling,
            ToolMessage("x is 42", tool_call_id="call_1"),
        ]
    )
    sent = fake_openai.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "tool"]
    # The tool-calling turn in progress carries its reasoning back...
    assert sent[3]["reasoning_content"] == "need x"
    assert sent[3]["tool_calls"][0]["id"] == "call_1"
    # ...a finished turn does not (deepseek-reasoner answers 400 to that).
    assert "reasoning_content" not in sent[1]


async def test_an_appended_image_note_does_not_end_the_turn(fake_openai: FakeOpenAIServer):
    # A vision + reasoning model: the agent appends the viewed image as a user-role request
    # note after the tool result; the tool-calling message still carries its reasoning.
    call = {"name": "view_image", "args": {"path": "/p.png"}, "id": "call_v", "type": "tool_call"}
    note = HumanMessage(
        [{"type": "text", "text": "<viewed_images>…</viewed_images>"}],
        additional_kwargs={NOTE_KEY: "viewed_images"},
    )
    fake_openai.queue(Reply.text("A cat."))
    await make(fake_openai).ainvoke(
        [
            HumanMessage("look at p.png"),
            AIMessage("", tool_calls=[call], additional_kwargs={"reasoning_content": "look"}),
            ToolMessage("Loaded /p.png", tool_call_id="call_v"),
            note,
        ]
    )
    sent = fake_openai.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[1]["reasoning_content"] == "look"
    assert NOTE_KEY not in sent[3]  # request notes are not sent as fields
