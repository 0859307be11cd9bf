"""A messages graph for the agent-protocol tests, steered by the last message's text:

- ``fail …``: raises; ``hang …``: waits until cancelled (it never answers by itself);
- ``ask …``: interrupts with a question, then answers ``got: <resume value>``;
- ``report …``: answers and also sets ``structured_response`` and ``artifacts`` (a file);
- anything else: answers ``heard: <text>``, streamed as a few message chunks.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict


class AgentishState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    structured_response: dict[str, Any]
    artifacts: list[str]


async def answer(state: AgentishState) -> dict[str, Any]:
    last = state["messages"][-1]
    text = last.content if isinstance(last.content, str) else str(last.content)
    if text.startswith("fail"):
        raise RuntimeError("agentish: asked to fail")
    if text.startswith("hang"):
        await asyncio.Event().wait()
    if text.startswith("ask"):
        reply = interrupt({"question": "Which colour?"})
        return {"messages": [AIMessage(content=f"got: {reply}")]}
    if text.startswith("report"):
        return {
            "messages": [AIMessage(content="report ready")],
            "structured_response": {"rows": 3, "ok": True},
            "artifacts": ["/mnt/user-data/outputs/report.md"],
        }
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"heard: {text}")]))
    message: AIMessageChunk | None = None
    async for chunk in model.astream(state["messages"]):
        message = chunk if message is None else message + chunk
    assert message is not None
    return {"messages": [AIMessage(content=message.content, id=message.id)]}


builder = StateGraph(AgentishState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile()
