"""`McpManager`: the app's MCP servers, their discovered tools, their sessions.

Tool schemas are discovered in the background (at start, on hot reload, and again for a
failed server when the agent next looks, at most every `RETRY_S`): nothing waits for a
server, so a slow or broken one never delays startup or a run; its tools are simply not
offered and the reason is in :meth:`status`. The LangChain tools are built once per
discovery and are stable objects: a call finds its session in the pool at call time, by
(server, user, thread) for stdio servers and by server for http/sse ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import re
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp.types as mt
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.interceptors import MCPToolCallRequest
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from langgraph.config import get_config
from mcp.shared.exceptions import McpError as ProtocolError

from pronghorn.config.schema.mcp import McpConfig, McpServerConfig
from pronghorn.mcp.errors import McpToolError, McpUnavailable
from pronghorn.mcp.oauth import TokenSource
from pronghorn.mcp.sessions import (
    SHARED_SCOPE,
    Placement,
    SessionPool,
    describe,
    open_client_session,
)
from pronghorn.sandbox.paths import ThreadPaths, user_folder

log = logging.getLogger("pronghorn.mcp")

RETRY_S = 30.0
MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

Status = Literal["disabled", "connecting", "connected", "error"]


def tool_name(prefix: str | None, tool: str) -> str:
    """The name the model sees: ``<server>_<tool>`` (or the tool's own), made safe for
    every provider (letters, digits, _ and -; at most 64 characters)."""
    raw = f"{prefix}_{tool}" if prefix else tool
    return _UNSAFE.sub("_", raw)[:MAX_TOOL_NAME]


@dataclass(frozen=True)
class RunScope:
    """Whose conversation a call belongs to (from the run's config)."""

    user: str
    thread: str | None

    @classmethod
    def current(cls) -> RunScope:
        try:
            conf = get_config().get("configurable") or {}
        except RuntimeError:
            conf = {}
        thread = conf.get("thread_id")
        return cls(
            user=str(conf.get("user_id") or user_folder(None)),
            thread=str(thread) if thread is not None else None,
        )


@dataclass
class ServerState:
    name: str
    config: McpServerConfig
    tokens: TokenSource | None
    status: Status = "connecting"
    tools: list[BaseTool] = field(default_factory=list[BaseTool])
    error: str | None = None
    checked_at: dt.datetime | None = None
    checked_mono: float = 0.0
    discovery: asyncio.Task[None] | None = None


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    tools: list[dict[str, str]]
    error: str | None
    elapsed_ms: int


class _Route:
    """The interceptor of one server's tools: every call goes to the manager's pool."""

    def __init__(self, manager: McpManager, server: str) -> None:
        self.manager = manager
        self.server = server

    # Any: the adapter's next-interceptor callable has no exported type.
    async def __call__(self, request: MCPToolCallRequest, handler: Any) -> mt.CallToolResult:
        return await self.manager.call_tool(
            self.server, request.name, dict(request.args), RunScope.current()
        )


class McpManager:
    def __init__(self, config: McpConfig, data_dir: Path) -> None:
        self.config = config
        self.data_dir = data_dir
        self.pool = SessionPool(max_stdio=config.max_stdio_sessions)
        self._servers: dict[str, ServerState] = {}
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Begin discovering every enabled server (returns at once)."""
        for name, server in self.config.servers.items():
            self._add(name, server)

    async def apply(self, config: McpConfig) -> None:
        """A new `mcp:` section: changed or removed servers lose their sessions (changed
        ones are discovered again); unchanged servers keep theirs."""
        old = self.config
        self.config = config
        self.pool.max_stdio = config.max_stdio_sessions
        renamed = old.tool_name_prefix != config.tool_name_prefix
        for name in list(self._servers):
            new = config.servers.get(name)
            if new is not None and new == self._servers[name].config and not renamed:
                continue
            await self._remove(name)
            if new is not None:
                self._add(name, new)
        for name, server in config.servers.items():
            if name not in self._servers:
                self._add(name, server)

    async def close_thread(self, thread_id: str) -> int:
        """Stop the stdio servers of a thread being deleted (their working directory goes)."""
        return await self.pool.close_thread(thread_id.lower())

    async def aclose(self) -> None:
        self._closed = True
        for name in list(self._servers):
            await self._remove(name)
        await self.pool.aclose()

    def _add(self, name: str, server: McpServerConfig) -> None:
        tokens = TokenSource(server.oauth) if server.oauth is not None else None
        state = ServerState(name, server, tokens)
        self._servers[name] = state
        if not server.enabled:
            state.status = "disabled"
            return
        self._discover(state)

    async def _remove(self, name: str) -> None:
        state = self._servers.pop(name, None)
        if state is not None and state.discovery is not None and not state.discovery.done():
            state.discovery.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await state.discovery
        await self.pool.close_server(name)

    def _discover(self, state: ServerState) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a synchronous caller (graph.invoke): retried by the next async one
            return
        if self._closed:
            return
        state.status = "connecting" if state.status != "connected" else state.status
        state.discovery = loop.create_task(
            self._run_discovery(state), name=f"mcp-discover:{state.name}"
        )

    async def _run_discovery(self, state: ServerState) -> None:
        found = await self._list_tools(state.name, state.config, state.tokens)
        state.checked_at = dt.datetime.now(dt.UTC)
        state.checked_mono = time.monotonic()
        if isinstance(found, str):
            state.status, state.error, state.tools = "error", found, []
            log.warning("mcp server %s is unavailable: %s", state.name, found)
            return
        prefix = state.name if self.config.tool_name_prefix else None
        state.tools = [self._wrap(state.name, prefix, t) for t in found]
        state.status, state.error = "connected", None
        log.info("mcp server %s: %d tools", state.name, len(state.tools))

    async def _list_tools(
        self, name: str, server: McpServerConfig, tokens: TokenSource | None
    ) -> list[mt.Tool] | str:
        """The server's tools from a short-lived session, or why it failed."""
        placement = self._probe_placement(name) if server.type == "stdio" else None
        if placement is not None:
            await asyncio.to_thread(placement.cwd.mkdir, parents=True, exist_ok=True)
            await asyncio.to_thread(placement.stderr_path.parent.mkdir, parents=True, exist_ok=True)
        stderr = (
            await asyncio.to_thread(placement.stderr_path.open, "a", encoding="utf-8")
            if placement is not None
            else None
        )
        try:
            async with asyncio.timeout(server.startup_timeout_s):
                async with open_client_session(
                    name, server, placement=placement, tokens=tokens, stderr=stderr
                ) as session:
                    tools: list[mt.Tool] = []
                    cursor: str | None = None
                    for _ in range(100):
                        page = await session.list_tools(
                            params=mt.PaginatedRequestParams(cursor=cursor) if cursor else None
                        )
                        tools.extend(page.tools)
                        cursor = page.nextCursor
                        if not cursor:
                            break
                    return tools
        except TimeoutError:
            return f"no answer within {server.startup_timeout_s:g} s (startup_timeout_s)"
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return describe(exc)
        finally:
            if stderr is not None:
                await asyncio.to_thread(stderr.close)

    def _wrap(self, server: str, prefix: str | None, tool: mt.Tool) -> BaseTool:
        lc = convert_mcp_tool_to_langchain_tool(
            None,
            tool,
            connection={"transport": "stdio", "command": "-", "args": []},  # never used
            tool_interceptors=[_Route(self, server)],
            server_name=server,
        )
        lc.name = tool_name(prefix, tool.name)
        lc.metadata = {**(lc.metadata or {}), "mcp_server": server, "mcp_tool": tool.name}
        return lc

    def _probe_placement(self, name: str) -> Placement:
        base = self.data_dir / "mcp"
        return Placement(cwd=base / "probe" / name, stderr_path=base / "logs" / f"{name}.log")

    # -- what the agent sees -----------------------------------------------------------

    def tools(self, allow: Collection[str] | None = None) -> list[BaseTool]:
        """The tools of every connected, enabled server (in config order; a name already
        taken by an earlier server is skipped), restricted to `allow` when given."""
        seen: set[str] = set()
        out: list[BaseTool] = []
        now = time.monotonic()
        for name, state in self._servers.items():
            if allow is not None and name not in allow:
                continue
            idle = state.discovery is None or state.discovery.done()
            if state.status == "error" and now - state.checked_mono > RETRY_S and idle:
                self._discover(state)
            for tool in state.tools:
                if tool.name not in seen:
                    seen.add(tool.name)
                    out.append(tool)
        return out

    def describe_servers(self, allow: Collection[str] | None = None) -> list[tuple[str, str]]:
        return [
            (name, s.config.description)
            for name, s in self._servers.items()
            if s.tools and (allow is None or name in allow)
        ]

    # -- calls -------------------------------------------------------------------------

    def _placement(self, name: str, scope: RunScope) -> tuple[str, Placement]:
        logs = self.data_dir / "mcp" / "logs" / f"{name}.log"
        if scope.thread is not None:
            try:
                paths = ThreadPaths.for_thread(self.data_dir, scope.user, scope.thread)
                return f"{scope.user}/{paths.thread_id}", Placement(paths.workspace, logs)
            except ValueError:
                pass
        return f"{scope.user}/-", Placement(self.data_dir / "mcp" / "scratch" / scope.user, logs)

    async def call_tool(
        self,
        name: str,
        tool: str,
        args: dict[str, object],  # whatever JSON the model produced
        scope: RunScope,
    ) -> mt.CallToolResult:
        state = self._servers.get(name)
        if state is None or not state.config.enabled:
            raise McpToolError(f"MCP server {name!r} is not configured (or disabled) any more")
        server = state.config
        if server.type == "stdio":
            key, placement = self._placement(name, scope)
            await asyncio.to_thread(placement.cwd.mkdir, parents=True, exist_ok=True)
        else:
            key, placement = SHARED_SCOPE, None
        try:
            session = await self.pool.get(
                name, server, key, placement=placement, tokens=state.tokens
            )
        except McpUnavailable as exc:
            raise McpToolError(str(exc)) from None
        limit = server.tool_call_timeout_s
        try:
            async with asyncio.timeout(limit + 5):
                return await session.call_tool(
                    tool, args, read_timeout_seconds=timedelta(seconds=limit)
                )
        except TimeoutError:
            raise McpToolError(self._timed_out(name, tool, limit)) from None
        except ProtocolError as exc:
            if exc.error.code == mt.CONNECTION_CLOSED:
                await self.pool.discard(name, key, session)
                raise McpToolError(self._closed_during(name, tool)) from None
            if exc.error.code == 408:
                raise McpToolError(self._timed_out(name, tool, limit)) from None
            raise McpToolError(
                f"MCP server {name!r} refused {tool!r}: {exc.error.message}"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            await self.pool.discard(name, key, session)
            raise McpToolError(self._closed_during(name, tool)) from None

    @staticmethod
    def _timed_out(name: str, tool: str, limit: float) -> str:
        return f"MCP tool {tool!r} of server {name!r} timed out after {limit:g} s"

    @staticmethod
    def _closed_during(name: str, tool: str) -> str:
        return (
            f"MCP server {name!r} closed the connection during {tool!r} (it may have crashed); "
            "it is restarted on the next call"
        )

    # -- status and probes -------------------------------------------------------------

    def status(self) -> dict[str, object]:
        """The JSON status report of the API (gateway/schemas: McpStatus)."""
        servers: list[dict[str, object]] = []
        total = 0
        for name, state in self._servers.items():
            total += len(state.tools)
            servers.append(
                {
                    "name": name,
                    "type": state.config.type,
                    "enabled": state.config.enabled,
                    "description": state.config.description,
                    "status": state.status,
                    "connected": state.status == "connected",
                    "tools": [
                        {
                            "name": t.name,
                            "tool": (t.metadata or {}).get("mcp_tool", t.name),
                            "description": t.description,
                        }
                        for t in state.tools
                    ],
                    "last_error": state.error,
                    "checked_at": state.checked_at.isoformat() if state.checked_at else None,
                    "sessions": self.pool.count(name),
                }
            )
        return {
            "servers": servers,
            "tool_count": total,
            "tool_search_threshold": self.config.tool_search_threshold,
            "deferred": total > self.config.tool_search_threshold,
        }

    async def wait_discovered(self) -> None:
        """Until every discovery in flight has finished (tests, `test connection`)."""
        tasks = [s.discovery for s in self._servers.values() if s.discovery is not None]
        await asyncio.gather(*tasks, return_exceptions=True)

    async def probe(self, name: str, server: McpServerConfig) -> ProbeResult:
        """Connect to a (possibly unsaved) server and list its tools, changing nothing."""
        started = time.monotonic()
        tokens = TokenSource(server.oauth) if server.oauth is not None else None
        found = await self._list_tools(name, server, tokens)
        elapsed = int((time.monotonic() - started) * 1000)
        if isinstance(found, str):
            return ProbeResult(False, [], found, elapsed)
        tools = [{"name": t.name, "description": t.description or ""} for t in found]
        return ProbeResult(True, tools, None, elapsed)
