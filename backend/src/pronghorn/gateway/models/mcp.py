"""MCP server configuration and status (`/api/mcp/*`, admins only)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from pronghorn.mcp.server_manager import Status


class McpConfigView(BaseModel):
    mcp_servers: dict[str, dict[str, object]]  # as configured, secrets masked
    tool_name_prefix: bool
    tool_search_threshold: int
    max_stdio_sessions: int
    source_path: str | None
    writable: bool


class McpToolInfo(BaseModel):
    name: str
    tool: str
    description: str | None


class McpServerStatus(BaseModel):
    name: str
    type: Literal["stdio", "http", "sse"]
    enabled: bool
    description: str | None
    status: Status
    connected: bool
    tools: list[McpToolInfo]
    last_error: str | None
    checked_at: str | None
    sessions: int


class McpStatus(BaseModel):
    servers: list[McpServerStatus]
    tool_count: int
    tool_search_threshold: int
    deferred: bool


class McpProbeTool(BaseModel):
    name: str
    description: str


class McpProbe(BaseModel):
    ok: bool
    tools: list[McpProbeTool]
    error: str | None
    elapsed_ms: int
