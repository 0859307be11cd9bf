"""A graph without `messages` (input `{"n": int}`): not callable as an agent."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class CounterState(TypedDict, total=False):
    n: int


async def bump(state: CounterState) -> dict[str, Any]:
    return {"n": int(state.get("n") or 0) + 1}


builder = StateGraph(CounterState)
builder.add_node("bump", bump)
builder.add_edge(START, "bump")
builder.add_edge("bump", END)
graph = builder.compile()
