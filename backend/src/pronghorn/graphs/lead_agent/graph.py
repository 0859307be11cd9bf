"""The lead agent graph.

Until the full agent harness lands, this is a minimal chat graph: it answers with the
configured default chat model (the offline demo model when no key is configured).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph


class LeadState(MessagesState):
    title: str | None


def make_graph(config: RunnableConfig, runtime: Any = None) -> Any:
    async def respond(state: LeadState, config: RunnableConfig) -> dict[str, Any]:
        model = None
        if runtime is not None and getattr(runtime, "models", None) is not None:
            ctx = config.get("configurable") or {}
            model = runtime.models.create(ctx.get("model_name"))
        if model is None:
            last = state["messages"][-1].content if state["messages"] else ""
            return {"messages": [AIMessage(content=f"echo: {last}")]}
        reply = await model.ainvoke(state["messages"], config)
        update: dict[str, Any] = {"messages": [reply]}
        if not state.get("title") and state["messages"]:
            first = str(state["messages"][0].content)
            update["title"] = first[:60]
        return update

    builder = StateGraph(LeadState)
    builder.add_node("agent", respond)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile()
