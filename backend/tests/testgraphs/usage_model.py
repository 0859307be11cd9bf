"""A one-node graph that asks the configured model once (for token-usage tests).

The factory asks for Pronghorn's ``GraphRequest`` and builds the run's model from the
config snapshot the run was accepted under (the run's ``context.model_name`` or the
default model).
"""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from pronghorn.graphs.requests import GraphRequest
from pronghorn.models.factory import ModelFactory


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]


def make_graph(request: GraphRequest):
    async def ask(state: State) -> dict[str, Any]:
        assert request.app_config is not None  # a run always carries its snapshot
        models = ModelFactory(request.app_config)
        asked = (request.context or {}).get("model_name")
        name = asked if isinstance(asked, str) and asked else models.default_model_name()
        return {"messages": [await models.create(name).ainvoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile()
