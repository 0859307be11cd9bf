"""The three protocols against a real `pronghorn serve` (uvicorn on loopback, auth on):
each client gets nothing but the URL and an API key made through the API."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from openai import OpenAI

from auth.authkit import AuthedServer, local_config, set_up
from protocols.conftest import protocol_config
from support.live import LiveServer


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    cfg = protocol_config(**{"auth": local_config()["auth"]})
    server = LiveServer(tmp_path_factory.mktemp("protocols-live"), cfg).start()
    authed = AuthedServer(server, set_up(server))
    try:
        key = authed.new_key(authed.login(), "protocols")["key"]
        yield server, str(key)
    finally:
        authed.close()  # its login's HTTP client
        server.stop()


def test_openai_client(live: tuple[LiveServer, str]):
    server, key = live
    with OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0) as client:
        done = client.chat.completions.create(
            model="lead_agent", messages=[{"role": "user", "content": "usage please"}]
        )
        assert done.choices[0].message.content == "Counted tokens for you"
        deltas = [
            c.choices[0].delta.content or ""
            for c in client.chat.completions.create(
                model="agentish",
                messages=[{"role": "user", "content": "over the wire"}],
                stream=True,
            )
            if c.choices
        ]
        assert len([d for d in deltas if d]) > 1 and "".join(deltas) == "heard: over the wire"


async def test_mcp_client(live: tuple[LiveServer, str]):
    server, key = live
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http,
        streamable_http_client(f"{server.url}/api/langgraph/mcp/", http_client=http) as (
            read,
            write,
            _,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert "lead_agent" in [t.name for t in (await session.list_tools()).tools]
        result = await session.call_tool("lead_agent", {"question": "hello"})
        assert result.content[0].text == "Hello from the scripted lead agent"  # type: ignore[union-attr]


async def test_a2a_client(live: tuple[LiveServer, str]):
    server, key = live
    url = f"{server.url}/api/langgraph/a2a/agentish"
    async with httpx.AsyncClient(headers={"x-api-key": key}, timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        message = pb.Message(
            role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(text="go live")]
        )
        try:
            events = [e async for e in client.send_message(pb.SendMessageRequest(message=message))]
        finally:
            await client.close()
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    chunks = [
        p.text
        for e in events
        if e.HasField("artifact_update")
        for p in e.artifact_update.artifact.parts
    ]
    assert "".join(chunks) == "heard: go live"
