"""Request projection: the MCP tools the model may call, read from the live catalog.

The compiled graph knows only the built-in tools; this middleware adds the MCP tools to
each model request (``wrap_model_call``) and hands the tool node the matching tool when
the model calls one (``wrap_tool_call``), so servers that connect, change or go away are
seen at the next model call without rebuilding the graph. With more tools than
`mcp.tool_search_threshold`, only ``tool_search`` and the thread's promoted tools are
offered. Every MCP tool result carries ``mcp_server``/``mcp_tool`` in its
``additional_kwargs`` (the UI shows the server on the tool card).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from pronghorn.mcp.server_manager import McpManager
from pronghorn.mcp.tool_search import TOOL_SEARCH, make_tool_search, merge_promoted

# Any: LangGraph's Command is generic over the graph's node names (``goto``), which a
# middleware never knows (as agent/tool_types.py's ToolResult, which mcp/ may not import).
ToolResult = ToolMessage | Command[Any]


# The agent's state, generic over its structured response: any (object) here.
class McpState(AgentState[object]):
    mcp_promoted: NotRequired[Annotated[list[str], merge_promoted]]


def _text(message: SystemMessage | None) -> str:
    if message is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    return "".join(
        b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else str(b)
        for b in message.content
    )


class McpToolsMiddleware(AgentMiddleware[McpState]):
    state_schema = McpState

    def __init__(self, manager: McpManager, allow: Collection[str] | None = None) -> None:
        super().__init__()
        self.manager = manager
        self.allow = frozenset(allow) if allow is not None else None
        self.search_tool = make_tool_search(self._catalog)

    def _catalog(self) -> list[BaseTool]:
        return self.manager.tools(self.allow)

    def _deferred(self, count: int) -> bool:
        return count > self.manager.config.tool_search_threshold

    def _project(self, request: ModelRequest) -> ModelRequest:
        taken = {t.name for t in request.tools if isinstance(t, BaseTool)}
        tools = [t for t in self._catalog() if t.name not in taken]
        if not tools:
            return request
        if not self._deferred(len(tools)):
            return request.override(tools=[*request.tools, *tools])
        promoted = set(request.state.get("mcp_promoted") or [])
        shown = [t for t in tools if t.name in promoted]
        servers = ", ".join(
            f"{name} ({desc})" if desc else name
            for name, desc in self.manager.describe_servers(self.allow)
        )
        note = (
            f"{len(tools)} more tools from MCP servers ({servers}) are available but not "
            f"listed: call `{TOOL_SEARCH}` with keywords to find and enable the ones you need."
        )
        base = _text(request.system_message)
        return request.override(
            tools=[*request.tools, self.search_tool, *shown],
            system_message=SystemMessage(content=f"{base}\n\n{note}" if base else note),
        )

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._project(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        return await handler(self._project(request))

    def _route(self, request: ToolCallRequest) -> tuple[ToolCallRequest, BaseTool | None]:
        if request.tool is not None:
            return request, None
        name = request.tool_call.get("name")
        if name == TOOL_SEARCH:
            return request.override(tool=self.search_tool), None
        for tool in self._catalog():
            if tool.name == name:
                return request.override(tool=tool), tool
        return request, None

    @staticmethod
    def _tag(result: ToolResult, tool: BaseTool | None) -> ToolResult:
        if tool is None or not isinstance(result, ToolMessage):
            return result
        meta = tool.metadata or {}
        extra = {"mcp_server": meta.get("mcp_server"), "mcp_tool": meta.get("mcp_tool")}
        content = result.content
        if isinstance(content, list) and all(
            isinstance(b, dict) and b.get("type") == "text" for b in content
        ):  # text only: one string, as the built-in tools answer
            texts = [str(b.get("text", "")) for b in content if isinstance(b, dict)]
            result = result.model_copy(update={"content": "\n".join(texts)})
        return result.model_copy(
            update={"additional_kwargs": {**result.additional_kwargs, **extra}}
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        routed, tool = self._route(request)
        return self._tag(handler(routed), tool)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        routed, tool = self._route(request)
        return self._tag(await handler(routed), tool)
