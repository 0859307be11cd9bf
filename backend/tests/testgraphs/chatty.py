"""An LLM-free graph that emits many events and can hold a run open, for event-log tests.

Input: ``{"events": n, "size": bytes, "gate": path, "after_gate": m, "steps": k,
"payload": bytes}``. ``emit`` writes ``n`` custom events of about ``size`` bytes each; with a
``gate`` it then waits until that file exists (the test creates it: a real condition, no
sleep-and-hope) and writes ``after_gate`` more. ``grow`` then runs ``k`` supersteps, each
adding ``payload`` bytes to the state, so the thread gets many (large) checkpoints.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from testgraphs.gate import wait_for_gate


class ChattyState(TypedDict, total=False):
    events: int
    size: int
    gate: str
    after_gate: int
    steps: int
    payload: int
    emitted: int
    blobs: Annotated[list[str], operator.add]


def _burst(writer: Any, start: int, count: int, size: int) -> None:
    for i in range(start, start + count):
        writer({"i": i, "pad": "x" * size})


async def emit(state: ChattyState) -> dict[str, Any]:
    writer = get_stream_writer()
    n, size = int(state.get("events") or 0), int(state.get("size") or 0)
    _burst(writer, 0, n, size)
    more = 0
    if state.get("gate"):
        await wait_for_gate(state["gate"])
        more = int(state.get("after_gate") or 0)
        _burst(writer, n, more, size)
    return {"emitted": n + more}


async def grow(state: ChattyState) -> dict[str, Any]:
    done = len(state.get("blobs") or [])
    if done >= int(state.get("steps") or 0):
        return {}
    return {"blobs": [f"{done:06d}" + "y" * int(state.get("payload") or 0)]}


def _more(state: ChattyState) -> str:
    return "grow" if len(state.get("blobs") or []) < int(state.get("steps") or 0) else END


builder = StateGraph(ChattyState)
builder.add_node("emit", emit)
builder.add_node("grow", grow)
builder.add_edge(START, "emit")
builder.add_conditional_edges("emit", _more, ["grow", END])
builder.add_conditional_edges("grow", _more, ["grow", END])
graph = builder.compile()
