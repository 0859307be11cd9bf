"""A one-node graph that asks the configured model once (for token-usage tests).

The factory receives the Pronghorn runtime and builds the run's model with
``runtime.models.create`` (the run's ``context.model_name`` or the default model).
"""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]


def make_graph(config: dict[str, Any], runtime: Any, context: dict[str, Any] | None = None):
    name = (context or {}).get("model_name") or runtime.models.default_model_name()
    model = runtime.models.create(name)

    async def ask(state: State) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile()
