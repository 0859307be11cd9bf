"""A graph that reports who it runs as: the `langgraph_auth_*` keys and the `user_id` of
its config, and the user its factory's `ServerRuntime` carried."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph_sdk.runtime import ServerRuntime
from typing_extensions import TypedDict


class WhoState(TypedDict, total=False):
    messages: list[Any]
    auth_user: Any
    auth_user_id: str
    auth_permissions: list[str]
    user_id: str
    factory_user: str | None


def make_graph(runtime: ServerRuntime) -> Any:
    user = runtime.user
    factory_user = user.identity if user is not None else None

    def report(state: WhoState, config: RunnableConfig) -> dict[str, Any]:
        conf = config.get("configurable") or {}
        return {
            "auth_user": conf.get("langgraph_auth_user"),
            "auth_user_id": conf.get("langgraph_auth_user_id"),
            "auth_permissions": conf.get("langgraph_auth_permissions"),
            "user_id": conf.get("user_id"),
            "factory_user": factory_user,
        }

    builder = StateGraph(WhoState)
    builder.add_node("report", report)
    builder.add_edge(START, "report")
    builder.add_edge("report", END)
    return builder.compile()
