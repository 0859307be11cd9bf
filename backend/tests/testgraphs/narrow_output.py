"""A graph whose output schema is narrower than its state (values chunks carry `answer`
only; the thread's state also has `scratch`)."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    question: str
    scratch: str
    answer: str


class Output(TypedDict, total=False):
    answer: str


def think(state: State) -> dict[str, Any]:
    return {"scratch": f"thinking about {state.get('question', '')}"}


def reply(state: State) -> dict[str, Any]:
    return {"answer": f"answer to {state.get('question', '')}"}


builder = StateGraph(State, output_schema=Output)
builder.add_node("think", think)
builder.add_node("reply", reply)
builder.add_edge(START, "think")
builder.add_edge("think", "reply")
builder.add_edge("reply", END)
graph = builder.compile()
