"""Tool post-processing: a tool that raises becomes an error ``ToolMessage``.

The model reads ``Error: <Type>: <message>`` and can recover (fix the arguments, try
another way). LangGraph control flow (interrupts, ``Command`` bubbling) and cancellation
pass through untouched, so ``ask_clarification``'s interrupt and its resume still work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest

from pronghorn.agent.tool_types import ToolResult

log = logging.getLogger("pronghorn.agent.tools")

MAX_ERROR_CHARS = 2000


def error_message(request: ToolCallRequest, exc: BaseException) -> ToolMessage:
    call = request.tool_call
    text = str(exc).strip() or repr(exc)
    if len(text) > MAX_ERROR_CHARS:
        text = text[:MAX_ERROR_CHARS] + " …"
    return ToolMessage(
        content=f"Error: {type(exc).__name__}: {text}",
        tool_call_id=call.get("id") or "",
        name=call.get("name"),
        status="error",
        additional_kwargs={"error_type": type(exc).__name__},
    )


class ToolErrorMiddleware(AgentMiddleware):
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            log.info("tool %s raised %s", request.tool_call.get("name"), exc)
            return error_message(request, exc)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        try:
            return await handler(request)
        except (GraphBubbleUp, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.info("tool %s raised %s", request.tool_call.get("name"), exc)
            return error_message(request, exc)
