"""The MCP endpoint, driven by the `mcp` SDK's Streamable HTTP client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from protocols.conftest import Authed
from support.inproc import InProcessServer
from support.sdk import as_state, values

URL = "http://localhost/api/langgraph/mcp/"


@asynccontextmanager
async def mcp_session(
    server: InProcessServer, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    async with (
        server.ahttp(headers=headers or {}, timeout=60) as http,
        streamable_http_client(URL, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_lists_the_message_assistants_as_tools(srv: InProcessServer):
    async with mcp_session(srv) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert {"lead_agent", "echo", "agentish"} <= set(tools)
    assert "counter" not in tools  # takes no messages
    schema = tools["lead_agent"].inputSchema
    assert schema["required"] == ["question"] and "thread_id" in schema["properties"]
    assert "input" not in schema["properties"]  # the harness's own state is not input
    # a graph with more input fields offers them, from its own input schema
    extra = tools["echo"].inputSchema["properties"]["input"]["properties"]
    assert {"turns", "sleep", "chunks"} <= set(extra) and "messages" not in extra


async def test_graph_input_fields_reach_the_graph(srv: InProcessServer):
    async with mcp_session(srv) as session:
        result = await session.call_tool("echo", {"question": "typed", "input": {"turns": 6}})
        assert result.structuredContent is not None
        bad = await session.call_tool("echo", {"question": "x", "input": {"nope": 1}})
        assert bad.isError and "nope" in bad.content[0].text  # type: ignore[union-attr]
    got = (await srv.sdk().threads.get_state(result.structuredContent["thread_id"]))["values"]
    assert as_state(got)["turns"] == 7 and as_state(got)["last_echo"] == "typed"


async def test_call_runs_the_lead_agent_with_progress(srv: InProcessServer):
    reports: list[tuple[float, str | None]] = []

    # named as mcp's ProgressFnT names them
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    async with mcp_session(srv) as session:
        result = await session.call_tool(
            "lead_agent", {"question": "hello there"}, progress_callback=on_progress
        )
    assert not result.isError
    assert result.content[0].text == "Hello from the scripted lead agent"  # type: ignore[union-attr]
    structured = result.structuredContent
    assert structured is not None and structured["status"] == "completed"
    assert [v for v, _ in reports] == list(range(len(reports)))  # started, then per step
    assert any("model" in (m or "") for _, m in reports)
    # an ordinary run of the thread, visible in the LangGraph API
    sdk = srv.sdk()
    run = await sdk.runs.get(structured["thread_id"], structured["run_id"])
    assert run["status"] == "success" and (run["metadata"] or {}).get("protocol") == "mcp"


async def test_thread_id_continues_the_conversation(srv: InProcessServer):
    async with mcp_session(srv) as session:
        first = await session.call_tool("echo", {"question": "one"})
        assert first.structuredContent is not None
        tid = first.structuredContent["thread_id"]
        second = await session.call_tool("echo", {"question": "two", "thread_id": tid})
    assert second.content[0].text == "echo: two"  # type: ignore[union-attr]
    state = await srv.sdk().threads.get_state(tid)
    assert [m["content"] for m in values(state)["messages"]] == [
        "one",
        "echo: one",
        "two",
        "echo: two",
    ]


async def test_errors_are_tool_errors(srv: InProcessServer):
    async with mcp_session(srv) as session:
        unknown = await session.call_tool("no_such_tool", {"question": "x"})
        assert unknown.isError
        missing = await session.call_tool("echo", {})
        assert missing.isError and "question" in missing.content[0].text  # type: ignore[union-attr]
        bad = await session.call_tool("echo", {"question": "x", "thread_id": "nope"})
        assert bad.isError
        failed = await session.call_tool("agentish", {"question": "fail please"})
        assert failed.isError and "asked to fail" in failed.content[0].text  # type: ignore[union-attr]
        asked = await session.call_tool("agentish", {"question": "ask me"})
        assert asked.structuredContent is not None
        assert asked.structuredContent["status"] == "input_required"
        assert "Which colour?" in asked.structuredContent["answer"]


async def test_cancelling_the_call_cancels_the_run(srv: InProcessServer):
    started = asyncio.Event()
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")
        started.set()

    async with mcp_session(srv) as session:
        outcome: list[BaseException] = []

        async def call() -> None:
            try:
                await session.call_tool(
                    "agentish", {"question": "hang on"}, progress_callback=on_progress
                )
            except McpError as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await started.wait()
            # The SDK's client numbers requests in order and uses the id as progress
            # token; it has no cancel call, so the notification is sent by hand.
            request_id = session._request_id - 1  # pyright: ignore[reportPrivateUsage]
            await session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(
                            requestId=request_id, reason="changed my mind"
                        )
                    )
                )
            )
        # still in the session: the run was cancelled by the notification, not a hang-up
        words = messages[0].split()
        run_id, thread_id = words[1], words[-1]
        sdk = srv.sdk()
        await sdk.runs.join(thread_id, run_id)
        run = await sdk.runs.get(thread_id, run_id)
        assert run["status"] == "interrupted"
    assert outcome and "cancel" in str(outcome[0]).lower()


async def test_closing_the_session_cancels_its_calls(srv: InProcessServer):
    started = asyncio.Event()
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")
        started.set()

    async with mcp_session(srv) as session, anyio.create_task_group() as tg:

        async def call() -> None:
            await session.call_tool(
                "agentish", {"question": "hang on"}, progress_callback=on_progress
            )

        tg.start_soon(call)
        await started.wait()
        tg.cancel_scope.cancel()
    words = messages[0].split()
    sdk = srv.sdk()
    await sdk.runs.join(words[-1], words[1])
    assert (await sdk.runs.get(words[-1], words[1]))["status"] == "interrupted"


async def test_api_key_is_required_and_sessions_belong_to_their_key(authed: Authed):
    server = authed.server
    with pytest.raises(Exception):  # noqa: B017 - the transport fails on the 401
        async with mcp_session(server, {"x-api-key": "phk_wrong"}):
            pass
    async with mcp_session(server, {"x-api-key": authed.alice_key}) as session:
        result = await session.call_tool("echo", {"question": "private"})
        assert result.structuredContent is not None
        tid = result.structuredContent["thread_id"]
    async with mcp_session(server, {"x-api-key": authed.bob_key}) as session:
        # bob cannot continue alice's thread
        peek = await session.call_tool("echo", {"question": "peek", "thread_id": tid})
        assert peek.isError and "not found" in peek.content[0].text  # type: ignore[union-attr]
    with server.http(headers={"x-api-key": authed.bob_key}) as http:
        assert http.post("/api/langgraph/mcp/", json={}).status_code != 500
