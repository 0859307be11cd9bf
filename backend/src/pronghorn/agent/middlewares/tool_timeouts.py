"""Tool post-processing: per-tool wall-clock timeouts (``tools.timeouts``).

A call that runs longer than its tool's timeout is cancelled and the model reads an error
result. ``bash`` is not wrapped: its timeout is the sandbox's, which kills the command's
whole process group (see tools/shell.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from pronghorn.agent.tool_types import ToolResult

UNWRAPPED = frozenset({"bash"})


class ToolTimeoutMiddleware(AgentMiddleware):
    def __init__(self, timeouts: Mapping[str, float]) -> None:
        super().__init__()
        self.timeouts = {k: v for k, v in timeouts.items() if k not in UNWRAPPED}

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        name = str(request.tool_call.get("name") or "")
        limit = self.timeouts.get(name)
        if limit is None:
            return await handler(request)
        try:
            return await asyncio.wait_for(handler(request), limit)
        except TimeoutError:
            return ToolMessage(
                content=f"Error: the {name} tool timed out after {limit:g}s and was stopped.",
                tool_call_id=request.tool_call.get("id") or "",
                name=name,
                status="error",
                additional_kwargs={"error_type": "ToolTimeout"},
            )
