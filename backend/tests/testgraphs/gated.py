"""A graph whose state updates can be held open by a test: writing ``{"gate": name}`` runs a
reducer that waits on the gate of that name (see `GATES`), in the server's own thread.

Runs answer ``done: <last message>``; only state updates touch ``gate``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


@dataclass
class Gate:
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


GATES: dict[str, Gate] = {}


def _through_gate(old: str | None, new: str) -> str:
    gate = GATES.get(new)
    if gate is not None:
        gate.entered.set()
        if not gate.release.wait(120):
            raise TimeoutError(f"gate {new} was never released")
    return new


class GatedState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    gate: Annotated[str, _through_gate]


async def respond(state: GatedState) -> dict[str, Any]:
    last = state["messages"][-1].content if state.get("messages") else ""
    return {"messages": [AIMessage(content=f"done: {last}")]}


builder = StateGraph(GatedState)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()
