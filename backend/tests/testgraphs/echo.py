"""An LLM-free echo graph with knobs for the run-engine tests and the benchmark.

Input: ``{"messages": [...], "sleep": seconds, "gate": path, "interrupt": bool, "fail": bool,
"chunks": n}``. ``prepare`` reads the knobs (and writes custom progress events),
``respond`` answers ``echo: <last message>``, optionally pausing on ``interrupt()`` first,
sleeping, waiting until the file ``gate`` exists, failing, or streaming ``chunks`` message
chunks.

The knobs are state channels, so they outlive the run that set them: a later run of the
thread that does not set them gets the state's (``prepare`` checkpoints them before
``respond`` sleeps, so even a run cancelled mid-sleep leaves ``sleep`` behind). A test that
wants a quick later run on such a thread gives it ``"sleep": 0``.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

from testgraphs.gate import wait_for_gate


class EchoState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    sleep: float
    gate: str
    interrupt: bool
    fail: bool
    chunks: int
    turns: int
    last_echo: str
    answer: Any


async def prepare(state: EchoState) -> dict[str, Any]:
    writer = get_stream_writer()
    writer({"progress": "prepare", "sleep": float(state.get("sleep") or 0)})
    return {
        "sleep": float(state.get("sleep") or 0),
        "interrupt": bool(state.get("interrupt")),
        "fail": bool(state.get("fail")),
    }


async def respond(state: EchoState) -> dict[str, Any]:
    writer = get_stream_writer()
    answer = None
    if state.get("interrupt"):
        answer = interrupt({"question": "continue?", "turns": state.get("turns", 0)})
    if state.get("sleep"):
        await asyncio.sleep(float(state["sleep"]))
    if state.get("gate"):
        await wait_for_gate(state["gate"])
    if state.get("fail"):
        raise ValueError("echo: requested failure")
    last = state["messages"][-1].content if state.get("messages") else ""
    text = f"echo: {last}"
    writer({"progress": "respond"})
    update: dict[str, Any] = {
        "last_echo": last,
        "turns": int(state.get("turns") or 0) + 1,
        "interrupt": False,
    }
    if answer is not None:
        update["answer"] = answer
    update["messages"] = [AIMessage(content=text)]
    return update


async def stream_tokens(state: EchoState) -> dict[str, Any]:
    """Streams `chunks` tokens through a tiny fake chat model so messages modes have chunks."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    n = int(state.get("chunks") or 0)
    words = " ".join(f"t{i}" for i in range(n))
    model = GenericFakeChatModel(messages=iter([AIMessage(content=words)]))
    message: AIMessageChunk | None = None
    async for chunk in model.astream(state["messages"]):
        message = chunk if message is None else message + chunk
        if state.get("sleep"):
            await asyncio.sleep(float(state["sleep"]) / max(n, 1))
    assert message is not None
    return {"messages": [AIMessage(content=message.content, id=message.id)]}


def route(state: EchoState) -> str:
    return "stream_tokens" if state.get("chunks") else "respond"


builder = StateGraph(EchoState)
builder.add_node("prepare", prepare)
builder.add_node("respond", respond)
builder.add_node("stream_tokens", stream_tokens)
builder.add_edge(START, "prepare")
builder.add_conditional_edges("prepare", route, ["respond", "stream_tokens"])
builder.add_edge("respond", END)
builder.add_edge("stream_tokens", END)
graph = builder.compile()
