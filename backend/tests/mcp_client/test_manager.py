"""The MCP manager against a real FastMCP server over stdio and streamable HTTP."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from mcp_client.conftest import stdio_server
from mcp_client.fixture_server import build
from mcp_client.servers import Served, TokenEndpoint
from pronghorn.config.schema.mcp import McpConfig, McpOAuthConfig
from pronghorn.mcp.errors import McpAuthError, McpToolError
from pronghorn.mcp.oauth import TokenSource
from pronghorn.mcp.server_manager import McpManager, RunScope
from pronghorn.sandbox.paths import ThreadPaths
from support.sdk import as_object


def _manager(tmp_path: Path, servers: dict[str, Any], **options: Any) -> McpManager:
    return McpManager(McpConfig.model_validate({"servers": servers, **options}), tmp_path)


def _text(result: Any) -> str:
    return result.content[0].text


def _scope() -> RunScope:
    return RunScope("u1", str(uuid.uuid4()))


async def test_stdio_and_http_tools_are_discovered_and_called(tmp_path: Path, http_mcp: Served):
    manager = _manager(
        tmp_path,
        {"fx": stdio_server(), "web": {"type": "http", "url": f"{http_mcp.url}/mcp"}},
    )
    try:
        manager.start()
        await manager.wait_discovered()
        names = [t.name for t in manager.tools()]
        assert names[:2] == ["fx_add", "fx_echo"] and "web_echo" in names
        status = {s["name"]: s for s in as_object(manager.status())["servers"]}
        assert status["fx"]["connected"] and status["web"]["status"] == "connected"
        assert {t["tool"] for t in status["web"]["tools"]} >= {"add", "echo", "hang"}
        tools = {t.name: t for t in manager.tools()}
        conf: RunnableConfig = {"configurable": {"user_id": "u1", "thread_id": str(uuid.uuid4())}}
        assert "42" in str(await tools["fx_add"].ainvoke({"a": 2, "b": 40}, config=conf))
        assert "HI" in str(await tools["web_echo"].ainvoke({"text": "hi"}, config=conf))
        assert manager.pool.count("web") == 1  # http: one shared session
        webs = [t for t in manager.tools() if t.name.startswith("web_")]
        assert manager.tools(allow=["web"]) == webs
    finally:
        await manager.aclose()
    assert manager.pool.count() == 0


async def test_sse_transport(tmp_path: Path):
    with Served(build().sse_app()) as sse:
        manager = _manager(tmp_path, {"old": {"type": "sse", "url": f"{sse.url}/sse"}})
        try:
            manager.start()
            await manager.wait_discovered()
            assert as_object(manager.status())["servers"][0]["connected"]
            result = await manager.call_tool("old", "echo", {"text": "sse"}, _scope())
            assert _text(result) == "SSE"
        finally:
            await manager.aclose()


async def test_stdio_runs_per_thread_in_its_workspace_with_a_scrubbed_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GATEWAY_SECRET_TOKEN", "do-not-leak")
    manager = _manager(
        tmp_path, {"fx": stdio_server(env={"MY_SETTING": "on"})}, max_stdio_sessions=2
    )
    try:
        manager.start()  # calls need not wait for discovery
        a, b, c = _scope(), _scope(), _scope()
        first = json.loads(_text(await manager.call_tool("fx", "where", {}, a)))
        again = json.loads(_text(await manager.call_tool("fx", "where", {}, a)))
        other = json.loads(_text(await manager.call_tool("fx", "where", {}, b)))
        assert first["pid"] == again["pid"] != other["pid"]
        assert a.thread is not None
        workspace = ThreadPaths.for_thread(tmp_path, "u1", a.thread).workspace
        assert Path(first["cwd"]) == workspace.resolve()
        assert "MY_SETTING" in first["env"] and "GATEWAY_SECRET_TOKEN" not in first["env"]
        # ours, plus the SDK's own safe list (SHELL, TERM, USER, LOGNAME); nothing else
        safe = {"PATH", "HOME", "LANG", "TMPDIR", "MY_SETTING", "LC_CTYPE"}
        assert set(first["env"]) <= safe | {"SHELL", "TERM", "USER", "LOGNAME"}
        await manager.call_tool("fx", "where", {}, c)  # a third conversation: LRU bound 2
        assert manager.pool.count("fx") == 2
        back = json.loads(_text(await manager.call_tool("fx", "where", {}, a)))
        assert back["pid"] != first["pid"]  # a's process was the least recently used
    finally:
        await manager.aclose()


async def test_timeout_and_crash_fail_the_call_not_the_server(tmp_path: Path):
    manager = _manager(tmp_path, {"fx": stdio_server(tool_call_timeout_s=3)})
    scope = _scope()
    try:
        manager.start()
        with pytest.raises(McpToolError, match="timed out after 3 s"):
            await manager.call_tool("fx", "hang", {}, scope)
        assert _text(await manager.call_tool("fx", "add", {"a": 1, "b": 1}, scope)) == "2"
        pid = json.loads(_text(await manager.call_tool("fx", "where", {}, scope)))["pid"]
        with pytest.raises(McpToolError, match="closed the connection"):
            await manager.call_tool("fx", "crash", {}, scope)
        again = json.loads(_text(await manager.call_tool("fx", "where", {}, scope)))
        assert again["pid"] != pid  # restarted on the next call
    finally:
        await manager.aclose()


async def test_a_broken_server_is_reported_and_never_blocks(tmp_path: Path):
    manager = _manager(
        tmp_path,
        {
            "missing": {"command": str(tmp_path / "no-such-program")},
            "down": {"type": "http", "url": "http://127.0.0.1:9/mcp", "startup_timeout_s": 20},
            "off": {**stdio_server(), "enabled": False},
            "mute": {  # starts, never answers `initialize`
                "command": sys.executable,
                "args": ["-c", "import sys; sys.stdin.read()"],
                "startup_timeout_s": 1,
            },
        },
    )
    try:
        started = time.monotonic()
        manager.start()
        assert time.monotonic() - started < 1  # discovery is in the background
        await manager.wait_discovered()
        status = {s["name"]: s for s in as_object(manager.status())["servers"]}
        assert status["missing"]["status"] == "error"
        assert "no-such-program" in status["missing"]["last_error"]
        assert status["down"]["status"] == "error" and status["down"]["last_error"]
        assert status["off"]["status"] == "disabled"
        assert status["mute"]["last_error"] == "no answer within 1 s (startup_timeout_s)"
        assert manager.tools() == []
        with pytest.raises(McpToolError, match="failed to start"):
            await manager.call_tool("missing", "add", {}, _scope())
        with pytest.raises(McpToolError, match="did not start within 1 s"):
            await manager.call_tool("mute", "add", {}, _scope())
        with pytest.raises(McpToolError, match="not configured"):
            await manager.call_tool("off", "add", {}, _scope())
    finally:
        await manager.aclose()


async def test_reload_adds_removes_and_keeps_unchanged_sessions(tmp_path: Path, http_mcp: Served):
    web = {"type": "http", "url": f"{http_mcp.url}/mcp"}
    manager = _manager(tmp_path, {"fx": stdio_server()})
    scope = _scope()
    try:
        manager.start()
        await manager.wait_discovered()
        pid = json.loads(_text(await manager.call_tool("fx", "where", {}, scope)))["pid"]
        both = {"servers": {"fx": stdio_server(), "web": web}}
        await manager.apply(McpConfig.model_validate(both))
        await manager.wait_discovered()
        assert {t.name for t in manager.tools()} >= {"fx_add", "web_add"}
        same = json.loads(_text(await manager.call_tool("fx", "where", {}, scope)))["pid"]
        assert same == pid  # unchanged server: its session stayed
        await manager.apply(McpConfig.model_validate({"servers": {"web": web}}))
        assert manager.pool.count("fx") == 0
        assert all(t.name.startswith("web_") for t in manager.tools())
        assert [s["name"] for s in as_object(manager.status())["servers"]] == ["web"]
        changed = {"web": {**web, "description": "now described"}}
        await manager.apply(McpConfig.model_validate({"servers": changed}))
        await manager.wait_discovered()
        assert as_object(manager.status())["servers"][0]["description"] == "now described"
    finally:
        await manager.aclose()


async def test_oauth_client_credentials_token_is_cached_and_sent(tmp_path: Path, oauth_mcp):
    mcp, endpoint, check = oauth_mcp
    oauth = {
        "token_url": f"{endpoint.url}/token",
        "client_id": "pronghorn",
        "client_secret": "s3cret",
        "scope": "tools",
    }
    server = {"type": "http", "url": f"{mcp.url}/mcp", "oauth": oauth}
    manager = _manager(tmp_path, {"secured": server})
    try:
        manager.start()
        await manager.wait_discovered()
        assert as_object(manager.status())["servers"][0]["connected"]
        assert _text(await manager.call_tool("secured", "add", {"a": 3, "b": 4}, _scope())) == "7"
        assert len(endpoint.requests) == 1  # one token for discovery and the call
        assert endpoint.requests[0]["scope"] == "tools"
        assert all(h == f"Bearer {endpoint.issued[0]}" for h in check.seen)
        wrong = {"secured": {**server, "oauth": {**oauth, "client_secret": "nope"}}}
        await manager.apply(McpConfig.model_validate({"servers": wrong}))
        await manager.wait_discovered()
        error = as_object(manager.status())["servers"][0]["last_error"]
        assert "token endpoint" in error and "401" in error
    finally:
        await manager.aclose()


async def test_token_is_refreshed_before_expiry_and_refresh_tokens_rotate():
    endpoint = TokenEndpoint(expires_in=120, rotate=True)
    with Served(endpoint.app(), lifespan="off") as tokens:
        now = [1000.0]
        source = TokenSource(
            McpOAuthConfig(
                token_url=f"{tokens.url}/token",
                grant_type="refresh_token",
                refresh_token="r-1",  # type: ignore[arg-type]
                refresh_skew_s=60,
            ),
            clock=lambda: now[0],
        )
        first = await source.header()
        assert first == f"Bearer {endpoint.issued[0]}"
        now[0] += 59  # still fresh: 120 s lifetime minus 60 s skew
        assert await source.header() == first and source.fetches == 1
        now[0] += 2  # within the skew: refreshed before it expires
        second = await source.header()
        assert second != first and source.fetches == 2
        assert [r["refresh_token"] for r in endpoint.requests] == ["r-1", "r-2"]
        bad = TokenSource(
            McpOAuthConfig(
                token_url=f"{tokens.url}/token",
                grant_type="refresh_token",
                refresh_token="stale",  # type: ignore[arg-type]
            )
        )
        with pytest.raises(McpAuthError, match="400"):
            await bad.header()
