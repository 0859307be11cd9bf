"""A graph with a subgraph node named `inner`, for `stream_subgraphs` namespaces."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    steps: int


async def step_one(state: State) -> dict[str, Any]:
    return {"steps": int(state.get("steps") or 0) + 1}


async def step_two(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(content="from inner")]}


inner_builder = StateGraph(State)
inner_builder.add_node("one", step_one)
inner_builder.add_node("two", step_two)
inner_builder.add_edge(START, "one")
inner_builder.add_edge("one", "two")
inner_builder.add_edge("two", END)
inner = inner_builder.compile()


async def finish(state: State) -> dict[str, Any]:
    return {"steps": int(state.get("steps") or 0) + 1}


builder = StateGraph(State)
builder.add_node("inner", inner)
builder.add_node("finish", finish)
builder.add_edge(START, "inner")
builder.add_edge("inner", "finish")
builder.add_edge("finish", END)
graph = builder.compile()
