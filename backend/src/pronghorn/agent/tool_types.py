"""Typed names for what LangChain hands a tool and a tool-call middleware.

LangChain leaves both partly untyped: ``Command`` is generic over the graph's node names,
and ``ToolRuntime`` defaults its state to a bare ``dict`` (the form ``ToolCallRequest.runtime``
has), so these are the one place that says what our tools and middlewares get.
"""

from __future__ import annotations

from typing import Any, cast

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

# What a tool call ends with: its message, or a Command that also updates the state.
# Any: LangGraph's Command is generic over the graph's node names (``goto``), which a
# middleware never knows.
ToolResult = ToolMessage | Command[Any]

# The ``runtime`` LangChain injects into a tool: no context schema (a run's context is
# whatever the caller sent) and the graph state as a dict of channel values.
AgentToolRuntime = ToolRuntime[object, dict[str, object]]


def request_runtime(request: ToolCallRequest) -> AgentToolRuntime | None:
    """The tool call's runtime (None outside a graph)."""
    # LangGraph types the field as the bare ``ToolRuntime`` (state ``dict``, Unknown items).
    return cast("AgentToolRuntime | None", request.runtime)
