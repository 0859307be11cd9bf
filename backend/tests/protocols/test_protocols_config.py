"""`protocols.*`: which assistants each protocol exposes, turning one off (live), and MCP
without sessions."""

from __future__ import annotations

from collections.abc import Callable

import openai
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from protocols.conftest import on_server, protocol_config, runtime_of
from protocols.test_openai_chat import client_of
from support.inproc import InProcessServer
from support.live import base_config

URL = "http://localhost/api/langgraph/mcp/"
Start = Callable[..., InProcessServer]


async def _tools(server: InProcessServer) -> list[str]:
    async with (
        server.ahttp(timeout=60) as http,
        streamable_http_client(URL, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = [t.name for t in (await session.list_tools()).tools]
        if names:
            result = await session.call_tool(names[0], {"question": "stateless?"})
            assert not result.isError, result.content
        return names


async def test_exposure_lists_and_stateless_mcp(start_app: Start):
    cfg = protocol_config(
        protocols={
            "mcp": {"assistants": ["echo"], "stateless": True},
            "openai": {"assistants": ["agentish", "counter"]},
        }
    )
    server = start_app(**cfg)
    assert await _tools(server) == ["echo"]  # and the call on it worked, without a session
    with client_of(server) as client:
        assert [m.id for m in client.models.list()] == ["agentish"]  # counter takes no messages
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(
                model="echo", messages=[{"role": "user", "content": "not exposed"}]
            )


def test_turning_a_protocol_off_is_live(start_app: Start):
    server = start_app(**base_config())
    with server.http() as http:
        assert http.get("/v1/models").status_code == 200
        off = {"openai": {"enabled": False}, "a2a": {"enabled": False}}
        server.write_config(base_config(protocols=off))
        assert on_server(server, runtime_of(server).settings.reload()) is True
        off = http.get("/v1/models")
        assert off.status_code == 404 and off.json()["error"]["type"] == "invalid_request_error"
        card = http.get("/api/langgraph/a2a/echo/.well-known/agent-card.json")
        assert card.status_code == 404
        rpc = http.post(
            "/api/langgraph/a2a/echo", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}
        )
        assert rpc.status_code == 404 and rpc.json()["error"]["code"] == -32601
