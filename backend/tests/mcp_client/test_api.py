"""MCP through the app: a scripted model calls `<server>_<tool>` in real runs; the config
API round-trips masked secrets into config.yaml; hot reload adds and removes servers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from mcp_client.conftest import stdio_server
from mcp_client.servers import Served
from pronghorn.auth.principal import Principal
from pronghorn.config.file_marks import HEAD
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.routers.mcp import admin
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from support.inproc import InProcessServer
from support.sdk import as_state


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {"match": "add please", "steps": [_call("fx_add", a=20, b=22), {"text": "It is 42."}]},
    {"match": "hang please", "steps": [_call("slow_hang"), {"text": "It hung, I moved on."}]},
    {"match": "crash please", "steps": [_call("fx_crash"), {"text": "It crashed, I moved on."}]},
    {
        "match": "search please",
        "steps": [
            _call("tool_search", query="add two integers"),
            _call("fx_add", a=1, b=2),
            {"text": "Found and used it."},
        ],
    },
]


def _runtime(srv: InProcessServer) -> AppRuntime:
    return srv.app.state.runtime  # type: ignore[attr-defined]


def _discovered(srv: InProcessServer) -> None:
    runtime = _runtime(srv)
    asyncio.run_coroutine_threadsafe(runtime.mcp.wait_discovered(), srv.loop).result(120)


def _start(start_app: Callable[..., InProcessServer], **mcp: Any) -> InProcessServer:
    srv = start_app(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        mcp=mcp,
    )
    _discovered(srv)
    return srv


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


async def test_a_run_calls_an_mcp_tool_and_streams_its_result(start_app):
    srv = _start(
        # "slow" only ever hangs: its call timeout is all the test waits (its process starts
        # before the timeout counts)
        start_app,
        servers={"fx": stdio_server(), "slow": stdio_server(tool_call_timeout_s=0.5)},
    )
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    parts = [
        p
        async for p in client.runs.stream(
            tid, "lead_agent", input=_human("add please"), stream_mode=["updates", "values"]
        )
    ]
    final = [p.data for p in parts if p.event == "values"][-1]
    tool = next(m for m in final["messages"] if m["type"] == "tool")
    assert tool["name"] == "fx_add" and tool["content"] == "42" and tool.get("status") != "error"
    assert tool["additional_kwargs"]["mcp_server"] == "fx"
    assert tool["additional_kwargs"]["mcp_tool"] == "add"
    assert final["messages"][-1]["content"] == "It is 42."
    updates = [p.data for p in parts if p.event == "updates"]
    assert any("tools" in u for u in updates)  # the tool result streamed as its own update
    # a hanging tool times out into an error ToolMessage; the run still succeeds
    out = await client.runs.wait(tid, "lead_agent", input=_human("hang please"))
    hung = [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]
    assert hung["status"] == "error" and "timed out after 0.5 s" in hung["content"]
    assert as_state(out)["messages"][-1]["content"] == "It hung, I moved on."
    assert (await client.runs.list(tid))[0]["status"] == "success"
    # the server dies mid-call: an error for that call, a new process for the next one
    out = await client.runs.wait(tid, "lead_agent", input=_human("crash please"))
    crashed = [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]
    assert crashed["status"] == "error" and "closed the connection" in crashed["content"]
    out = await client.runs.wait(tid, "lead_agent", input=_human("add please"))
    assert [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]["content"] == "42"
    assert (await client.runs.list(tid))[0]["status"] == "success"
    runtime = _runtime(srv)
    assert runtime.mcp.pool.count("fx") == 1  # this thread's own process
    # a custom agent's `mcp_servers` allow-list: without "fx" its tools are not there
    out = await client.runs.wait(
        tid, "lead_agent", input=_human("add please"), context={"mcp_servers": ["other"]}
    )
    refused = [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]
    assert refused["status"] == "error" and "fx_add" in refused["content"]
    await client.threads.delete(tid)  # deleting the thread stops its stdio server
    assert runtime.mcp.pool.count("fx") == 0


async def test_many_tools_are_deferred_behind_tool_search(start_app):
    srv = _start(start_app, servers={"fx": stdio_server()}, tool_search_threshold=2)
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "lead_agent", input=_human("search please"))
    tools = [m for m in as_state(out)["messages"] if m["type"] == "tool"]
    assert tools[0]["name"] == "tool_search" and "fx_add(a, b)" in tools[0]["content"]
    assert tools[1]["name"] == "fx_add" and tools[1]["content"] == "3"
    assert "fx_add" in as_state(out)["mcp_promoted"]
    async with srv.ahttp() as http:
        status = (await http.get("/api/mcp/status")).json()
    assert status["deferred"] is True and status["tool_count"] == 5


async def test_config_api_masks_secrets_and_round_trips_them(
    start_app, http_mcp: Served, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FX_TOKEN", "from-the-environment")
    srv = _start(start_app)
    text = srv.config_path.read_text()
    srv.config_path.write_text("# keep this comment\n" + text)
    web = {
        "type": "http",
        "url": f"{http_mcp.url}/mcp",
        "headers": {"Authorization": "Bearer literal-secret", "X-Ref": "${FX_TOKEN}"},
        "description": "the fixture over HTTP",
    }
    async with srv.ahttp() as http:
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"web": web}})
        assert r.status_code == 200, r.text
        view = r.json()["mcp_servers"]["web"]
        assert view["headers"] == {"Authorization": "***", "X-Ref": "${FX_TOKEN}"}
        on_disk = srv.config_path.read_text()
        assert on_disk.startswith(f"{HEAD}\n# keep this comment\n")  # marked, comment kept
        stored = yaml.safe_load(on_disk)["mcp"]["servers"]["web"]
        assert stored["headers"]["Authorization"] == "Bearer literal-secret"
        assert stored["headers"]["X-Ref"] == "${FX_TOKEN}"  # written as given
        # the live config has the interpolated value, and the server is discovered
        live = _runtime(srv).config.mcp.servers["web"]
        assert live.headers["X-Ref"].get_secret_value() == "from-the-environment"
        _discovered(srv)
        status = (await http.get("/api/mcp/status")).json()
        assert status["servers"][0]["connected"] and status["servers"][0]["tools"]
        # PUT the masked view back with one change: the secret is kept
        view["description"] = "renamed"
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"web": view}})
        assert r.status_code == 200, r.text
        stored = yaml.safe_load(srv.config_path.read_text())["mcp"]["servers"]["web"]
        assert stored["headers"]["Authorization"] == "Bearer literal-secret"
        assert stored["description"] == "renamed"
        # a mask with nothing stored behind it, and an invalid server: 400, file untouched
        before = srv.config_path.read_text()
        new = {"type": "http", "url": web["url"], "headers": {"A": "***"}}
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"web": view, "new": new}})
        assert r.status_code == 400 and "no stored value" in r.json()["detail"]
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"bad": {"type": "stdio"}}})
        assert r.status_code == 400 and "needs command" in r.json()["detail"]
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"x": {"url": "${NOPE_X}"}}})
        assert r.status_code == 400 and "NOPE_X" in r.json()["detail"]
        # stdio programs set through the API are limited (default: npx, uvx)
        evil = {"command": "/bin/sh", "args": ["-c", "id"]}
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"evil": evil}})
        assert r.status_code == 400 and "not allowed through the API" in r.json()["detail"]
        r = await http.post("/api/mcp/test", json={"name": "evil", "server": evil})
        assert r.status_code == 400
        preload = {"command": "npx", "env": {"LD_PRELOAD": "/tmp/x.so"}}
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"p": preload}})
        assert r.status_code == 400 and "LD_PRELOAD" in r.json()["detail"]
        assert srv.config_path.read_text() == before
        # the DeerFlow-style toggle
        r = await http.patch("/api/mcp/config", json={"server_name": "web", "enabled": False})
        assert r.status_code == 200 and r.json()["mcp_servers"]["web"]["enabled"] is False
        status = (await http.get("/api/mcp/status")).json()
        assert status["servers"][0]["status"] == "disabled"
        r = await http.patch("/api/mcp/config", json={"server_name": "nope", "enabled": True})
        assert r.status_code == 404


async def test_hot_reload_adds_and_removes_a_server_between_runs(start_app):
    srv = _start(start_app, api_stdio_commands=[sys.executable])
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "lead_agent", input=_human("add please"))
    first = [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]
    assert first["status"] == "error"  # no such tool yet
    async with srv.ahttp() as http:
        r = await http.put("/api/mcp/config", json={"mcp_servers": {"fx": stdio_server()}})
        assert r.status_code == 200, r.text
        _discovered(srv)
        out = await client.runs.wait(tid, "lead_agent", input=_human("add please"))
        assert [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]["content"] == "42"
        r = await http.put("/api/mcp/config", json={"mcp_servers": {}})
        assert r.status_code == 200
        assert (await http.get("/api/mcp/status")).json()["servers"] == []
    out = await client.runs.wait(tid, "lead_agent", input=_human("add please"))
    assert [m for m in as_state(out)["messages"] if m["type"] == "tool"][-1]["status"] == "error"


async def test_test_connection_probes_without_saving(start_app, http_mcp: Served):
    srv = _start(start_app, api_stdio_commands=["*"])
    before = srv.config_path.read_text()
    async with srv.ahttp() as http:
        ok = await http.post(
            "/api/mcp/test",
            json={"name": "web", "server": {"type": "http", "url": f"{http_mcp.url}/mcp"}},
        )
        assert ok.status_code == 200 and ok.json()["ok"] is True
        assert "add" in {t["name"] for t in ok.json()["tools"]}
        bad = await http.post(
            "/api/mcp/test", json={"name": "gone", "server": {"command": "/no/such/binary"}}
        )
        assert bad.status_code == 200 and bad.json()["ok"] is False
        assert "/no/such/binary" in bad.json()["error"]
        missing = await http.post("/api/mcp/test", json={"name": "nothing"})
        assert missing.status_code == 404
    assert srv.config_path.read_text() == before


async def test_only_admins_may_use_the_mcp_api():
    user = Principal(identity="u", display_name="U", role="user")
    with pytest.raises(ApiError) as caught:
        await admin(user)
    assert caught.value.status == 403
    boss = Principal(identity="a", display_name="A", role="admin")
    assert await admin(boss) is boss
