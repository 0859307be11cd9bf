"""A2A at /api/langgraph/a2a/{assistant_id}, driven by the a2a-sdk client (1.x). Each
client test runs twice: as the card offers it (the 1.0 methods, `SendMessage`…) and with
only the card's 0.3 interface (the client's compat transport: `message/send`…)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from protocols.conftest import Authed
from support.inproc import InProcessServer
from support.sdk import as_state

ECHO = "echo"


def base(assistant: str) -> str:
    return f"http://localhost/api/langgraph/a2a/{assistant}"


@pytest.fixture(params=["1.0", "0.3"])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def a2a_client(
    server: InProcessServer,
    assistant: str,
    version: str = "1.0",
    *,
    streaming: bool = False,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    async with server.ahttp(headers=headers or {}, timeout=60) as http:
        card = await A2ACardResolver(http, base(assistant)).get_agent_card()
        keep = [i for i in card.supported_interfaces if i.protocol_version == version]
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        try:
            yield client
        finally:
            await client.close()


def user_message(
    text: str = "", *, context_id: str = "", task_id: str = "", data: dict | None = None
) -> pb.Message:
    parts = [pb.Part(text=text)] if text else []
    if data is not None:
        parts.append(pb.Part(data=ParseDict(data, struct_pb2.Value())))
    return pb.Message(
        role=pb.ROLE_USER,
        parts=parts,
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        task_id=task_id,
    )


async def send(client: Client, message: pb.Message, **config: object) -> pb.Task:
    request = pb.SendMessageRequest(message=message, configuration=config or None)
    events = [e async for e in client.send_message(request)]
    assert len(events) == 1 and events[0].HasField("task")
    return events[0].task


def texts(task: pb.Task) -> list[str]:
    return [p.text for a in task.artifacts for p in a.parts if p.text]


async def test_agent_card_describes_the_assistant(srv: InProcessServer):
    async with srv.ahttp() as http:
        card = await A2ACardResolver(http, base(ECHO)).get_agent_card()
        assert card.name == "echo" and card.capabilities.streaming
        versions = {i.protocol_version for i in card.supported_interfaces}
        assert versions == {"1.0", "0.3"}
        for iface in card.supported_interfaces:
            assert iface.protocol_binding == "JSONRPC"
            assert iface.url.startswith("http://localhost/api/langgraph/a2a/")
        by_query = await http.get(
            "/api/langgraph/.well-known/agent-card.json", params={"assistant_id": ECHO}
        )
        assert by_query.status_code == 200 and by_query.json()["name"] == "echo"
        missing = await http.get(f"/api/langgraph/a2a/{uuid.uuid4()}/.well-known/agent-card.json")
        assert missing.status_code == 404
        counter = await http.get("/api/langgraph/a2a/counter/.well-known/agent-card.json")
        assert counter.status_code == 404  # no messages in its input: not an agent


async def test_send_completes_and_context_is_the_thread(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, ECHO, dialect) as client:
        task = await send(client, user_message("hello"))
        assert task.status.state == pb.TASK_STATE_COMPLETED
        assert texts(task) == ["echo: hello"]
        again = await send(client, user_message("more", context_id=task.context_id))
        assert again.context_id == task.context_id and again.id != task.id
        got = await client.get_task(pb.GetTaskRequest(id=task.id, history_length=10))
        assert got.status.state == pb.TASK_STATE_COMPLETED
        assert [p.text for m in got.history for p in m.parts] == [
            "hello",
            "echo: hello",
            "more",
            "echo: more",
        ]
    # an ordinary run on an ordinary thread
    sdk = srv.sdk()
    run = await sdk.runs.get(task.context_id, task.id)
    assert run["status"] == "success" and (run["metadata"] or {}).get("protocol") == "a2a"


async def test_stream_streams_tokens_and_ends_final(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, "agentish", dialect, streaming=True) as client:
        request = pb.SendMessageRequest(message=user_message("stream this please"))
        events = [e async for e in client.send_message(request)]
    assert events[0].HasField("task")
    assert events[1].status_update.status.state == pb.TASK_STATE_WORKING
    chunks = [
        p.text
        for e in events
        if e.HasField("artifact_update")
        for p in e.artifact_update.artifact.parts
    ]
    assert len(chunks) > 1 and "".join(chunks) == "heard: stream this please"
    last = events[-1].status_update
    assert last.status.state == pb.TASK_STATE_COMPLETED


async def test_input_required_then_resume_continues_the_thread(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, "agentish", dialect) as client:
        asked = await send(client, user_message("ask me something"))
        assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
        question = [p.text for p in asked.status.message.parts if p.text]
        assert question == ["Which colour?"]
        answered = await send(client, user_message("blue", task_id=asked.id))
        assert answered.id == asked.id and answered.context_id == asked.context_id
        assert answered.status.state == pb.TASK_STATE_COMPLETED
        assert texts(answered) == ["got: blue"]
        # terminal is final: the task takes no more input
        with pytest.raises(UnsupportedOperationError) as err:
            await send(client, user_message("again", task_id=asked.id))
        assert "terminal" in str(err.value)


async def test_cancelling_a_task_that_waits_for_input(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, "agentish", dialect) as client:
        asked = await send(client, user_message("ask again"))
        assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
        canceled = await client.cancel_task(pb.CancelTaskRequest(id=asked.id))
        assert canceled.status.state == pb.TASK_STATE_CANCELED
        got = await client.get_task(pb.GetTaskRequest(id=asked.id))
        assert got.status.state == pb.TASK_STATE_CANCELED
        with pytest.raises(UnsupportedOperationError):  # canceled is final too
            await send(client, user_message("red", task_id=asked.id))


async def test_data_files_and_failures(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, "agentish", dialect) as client:
        report = await send(client, user_message("report now"))
        assert report.status.state == pb.TASK_STATE_COMPLETED
        parts = [p for a in report.artifacts for p in a.parts]
        assert MessageToDict(next(p for p in parts if p.HasField("data")).data) == {
            "rows": 3.0,
            "ok": True,
        }
        files = [p for p in parts if p.url]
        assert files and files[0].url.endswith(
            f"/api/threads/{report.context_id}/artifacts/mnt/user-data/outputs/report.md"
        )
        assert files[0].filename == "report.md"
        failed = await send(client, user_message("fail it"))
        assert failed.status.state == pb.TASK_STATE_FAILED
        assert "asked to fail" in failed.status.message.parts[0].text


async def test_data_parts_are_graph_input(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, ECHO, dialect) as client:
        task = await send(client, user_message("typed", data={"turns": 41}))
    got = (await srv.sdk().threads.get_state(task.context_id))["values"]
    assert as_state(got)["turns"] == 42 and as_state(got)["last_echo"] == "typed"


async def test_cancel_really_cancels_the_run(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, "agentish", dialect) as client:
        submitted = await send(client, user_message("hang around"), return_immediately=True)
        assert submitted.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
        canceled = await client.cancel_task(pb.CancelTaskRequest(id=submitted.id))
        assert canceled.status.state == pb.TASK_STATE_CANCELED
        got = await client.get_task(pb.GetTaskRequest(id=submitted.id))
        assert got.status.state == pb.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError) as err:
            await client.cancel_task(pb.CancelTaskRequest(id=submitted.id))
        assert "not cancelable" in str(err.value).lower()
    run = await srv.sdk().runs.get(submitted.context_id, submitted.id)
    assert run["status"] == "interrupted"


async def test_protocol_errors_are_json_rpc_errors(srv: InProcessServer, dialect: str):
    async with a2a_client(srv, ECHO, dialect) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id=str(uuid.uuid4())))
    async with srv.ahttp() as http:
        url = f"/api/langgraph/a2a/{ECHO}"

        async def rpc(body: object) -> dict:
            resp = await http.post(url, json=body)
            assert resp.status_code == 200, resp.text
            return resp.json()

        assert (await http.post(url, content=b"{bad")).json()["error"]["code"] == -32700
        assert (await rpc([1]))["error"]["code"] == -32600
        assert (await rpc({"jsonrpc": "2.0", "id": 1, "method": "nope"}))["error"]["code"] == -32601
        bad = await rpc({"jsonrpc": "2.0", "id": 2, "method": "message/send", "params": {}})
        assert bad["error"]["code"] == -32602 and bad["id"] == 2
        file_part = {
            "message": {
                "role": "user",
                "messageId": "m1",
                "parts": [{"kind": "file", "file": {"uri": "https://example.com/x"}}],
            }
        }
        got = await rpc({"jsonrpc": "2.0", "id": 3, "method": "message/send", "params": file_part})
        assert got["error"]["code"] == -32005
        missing = await rpc(
            {"jsonrpc": "2.0", "id": 4, "method": "tasks/cancel", "params": {"id": "x"}}
        )
        assert missing["error"]["code"] == -32001
        # the same methods by their 1.0 names, with 1.0 shapes
        message = {"role": "ROLE_USER", "messageId": "m2", "parts": [{"text": "v1"}]}
        sent = await rpc(
            {"jsonrpc": "2.0", "id": 5, "method": "SendMessage", "params": {"message": message}}
        )
        assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        task_id = sent["result"]["task"]["id"]
        got = await rpc({"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": task_id}})
        assert got["result"]["artifacts"][0]["parts"] == [{"text": "echo: v1"}]
        bad_v1 = await rpc(
            {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": 3}}
        )
        assert bad_v1["error"]["code"] == -32602


async def test_api_key_is_required_and_tasks_are_private(authed: Authed, dialect: str):
    server = authed.server
    with pytest.raises(Exception):  # noqa: B017 - the card fetch gets a 401
        async with a2a_client(server, ECHO, headers={"x-api-key": "phk_wrong"}):
            pass
    async with a2a_client(server, ECHO, dialect, headers={"x-api-key": authed.alice_key}) as alice:
        task = await send(alice, user_message("mine"))
        assert task.status.state == pb.TASK_STATE_COMPLETED
    async with a2a_client(server, ECHO, dialect, headers={"x-api-key": authed.bob_key}) as bob:
        with pytest.raises(TaskNotFoundError):
            await bob.get_task(pb.GetTaskRequest(id=task.id))
        with pytest.raises(InvalidParamsError) as err:
            await send(bob, user_message("peek", context_id=task.context_id))
        assert "not found" in str(err.value)
    async with server.ahttp(headers={"x-api-key": authed.alice_key}) as http:
        card = (await http.get(f"/api/langgraph/a2a/{ECHO}/.well-known/agent-card.json")).json()
        assert card["security"] == [{"apiKey": []}, {"bearer": []}]
