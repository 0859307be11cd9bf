"""The OpenAI-compatible API, driven by the official `openai` Python client."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import openai
import pytest
from openai import OpenAI

from protocols.conftest import Authed
from support.inproc import InProcessServer
from support.sdk import as_state, values


def client_of(server: InProcessServer, api_key: str = "unused") -> OpenAI:
    http = server.http(timeout=60)  # an httpx client on the in-process app
    return OpenAI(
        base_url=f"{server.url}/v1",
        api_key=api_key,
        # openai 3 types http_client as httpx2's Client; it drives httpx's the same way
        http_client=http,  # pyright: ignore[reportArgumentType]
        max_retries=0,
    )


def test_models_lists_the_message_assistants_and_lead_agent_models(srv: InProcessServer):
    with client_of(srv) as client:
        ids = [m.id for m in client.models.list()]
        assert "lead_agent" in ids and "echo" in ids
        assert {"lead_agent:s", "lead_agent:other"} <= set(ids)
        assert "counter" not in ids  # its graph takes no messages
        assert client.models.retrieve("echo").owned_by == "pronghorn"
        with pytest.raises(openai.NotFoundError) as err:
            client.models.retrieve("nope")
        assert err.value.body["code"] == "model_not_found"  # type: ignore[index]


def test_completion_answers_with_usage_and_the_run_is_an_ordinary_run(srv: InProcessServer):
    with client_of(srv) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="lead_agent", messages=[{"role": "user", "content": "usage please"}]
        )
        done = raw.parse()
        assert done.object == "chat.completion"
        assert done.choices[0].message.content == "Counted tokens for you"
        assert done.choices[0].finish_reason == "stop"
        assert done.usage is not None
        assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (11, 4)
        assert done.usage.total_tokens == 15
        thread_id = raw.headers["x-pronghorn-thread-id"]
        run_id = raw.headers["x-pronghorn-run-id"]
    # the run shows in the LangGraph API like any other (the UI lists the thread too)
    sdk = srv.sync_sdk()
    run = sdk.runs.get(thread_id, run_id)
    assert run["status"] == "success" and (run["metadata"] or {}).get("protocol") == "openai"
    state = sdk.threads.get_state(thread_id)
    assert values(state)["messages"][-1]["content"] == "Counted tokens for you"


def test_assistant_colon_model_picks_the_lead_agents_model(srv: InProcessServer):
    with client_of(srv) as client:
        done = client.chat.completions.create(
            model="lead_agent:other", messages=[{"role": "user", "content": "hi"}]
        )
        assert done.choices[0].message.content == "The other model speaks"
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(
                model="lead_agent:missing", messages=[{"role": "user", "content": "hi"}]
            )


def test_stream_gives_token_deltas_usage_and_done(srv: InProcessServer):
    with client_of(srv) as client:
        stream = client.chat.completions.create(
            model="lead_agent",
            messages=[{"role": "user", "content": "usage please"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    deltas = [d for d in deltas if d]
    assert len(deltas) > 1  # word by word, not one blob
    assert "".join(deltas) == "Counted tokens for you"
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 15


def test_the_raw_stream_ends_with_done(srv: InProcessServer):
    with srv.http() as http:
        body = {"model": "echo", "messages": [{"role": "user", "content": "ping"}], "stream": True}
        with http.stream("POST", "/v1/chat/completions", json=body) as resp:
            assert resp.headers["content-type"].startswith("text/event-stream")
            lines = [line for line in resp.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert "echo: ping" in "".join(lines)


def test_user_field_and_header_continue_a_thread(srv: InProcessServer):
    user = f"conv-{uuid.uuid4()}"
    with client_of(srv) as client:
        first = client.chat.completions.with_raw_response.create(
            model="echo", user=user, messages=[{"role": "user", "content": "one"}]
        )
        assert first.parse().choices[0].message.content == "echo: one"
        thread_id = first.headers["x-pronghorn-thread-id"]
        # the whole history is sent, as OpenAI clients do; only the new turn reaches the thread
        second = client.chat.completions.with_raw_response.create(
            model="echo",
            user=user,
            messages=[
                {"role": "user", "content": "one"},
                {"role": "assistant", "content": "echo: one"},
                {"role": "user", "content": "two"},
            ],
        )
        assert second.headers["x-pronghorn-thread-id"] == thread_id
        third = client.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "three"}],
            extra_headers={"X-Pronghorn-Thread-Id": thread_id},
        )
        assert third.choices[0].message.content == "echo: three"
    got = srv.sync_sdk().threads.get_state(thread_id)["values"]
    assert [m["content"] for m in as_state(got)["messages"]] == [
        "one",
        "echo: one",
        "two",
        "echo: two",
        "three",
        "echo: three",
    ]


def test_errors_are_openai_shaped(srv: InProcessServer):
    with client_of(srv) as client:
        with pytest.raises(openai.NotFoundError) as missing:
            client.chat.completions.create(
                model="no-such-assistant", messages=[{"role": "user", "content": "x"}]
            )
        assert missing.value.body["type"] == "invalid_request_error"  # type: ignore[index]
        with pytest.raises(openai.BadRequestError) as empty:
            client.chat.completions.create(model="echo", messages=[])
        assert empty.value.body["param"] == "messages"  # type: ignore[index]
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(
                model="echo",
                messages=[{"role": "user", "content": "x"}],
                extra_headers={"X-Pronghorn-Thread-Id": "not-a-uuid"},
            )
        with pytest.raises(openai.APIStatusError) as failed:
            client.chat.completions.create(
                model="agentish", messages=[{"role": "user", "content": "fail now"}]
            )
        assert failed.value.status_code == 502
        assert failed.value.body["code"] == "run_failed"  # type: ignore[index]
    with srv.http() as http:
        resp = http.post(
            "/v1/chat/completions", content=b"{nope", headers={"content-type": "application/json"}
        )
        assert resp.status_code == 400
        assert resp.json()["error"]["type"] == "invalid_request_error"


def test_a_failed_run_mid_stream_is_an_error_event(srv: InProcessServer):
    with client_of(srv) as client:
        with pytest.raises(openai.APIError) as err:
            list(
                client.chat.completions.create(
                    model="agentish",
                    messages=[{"role": "user", "content": "fail now"}],
                    stream=True,
                )
            )
        assert "asked to fail" in str(err.value)


def test_api_key_is_required_and_scopes_the_threads(authed: Authed):
    server = authed.server
    with client_of(server, api_key="phk_wrong") as anon:
        with pytest.raises(openai.AuthenticationError) as err:
            anon.models.list()
        assert err.value.body["type"] == "authentication_error"  # type: ignore[index]
    with client_of(server, api_key=authed.alice_key) as alice:
        raw = alice.chat.completions.with_raw_response.create(
            model="echo", user="mine", messages=[{"role": "user", "content": "secret"}]
        )
        thread_id = raw.headers["x-pronghorn-thread-id"]
        assert raw.parse().choices[0].message.content == "echo: secret"
    with client_of(server, api_key=authed.bob_key) as bob:
        # the same conversation key is another thread for another user ...
        other = bob.chat.completions.with_raw_response.create(
            model="echo", user="mine", messages=[{"role": "user", "content": "hello"}]
        )
        assert other.headers["x-pronghorn-thread-id"] != thread_id
        # ... and alice's thread is not there for bob
        with pytest.raises(openai.NotFoundError):
            bob.chat.completions.create(
                model="echo",
                messages=[{"role": "user", "content": "peek"}],
                extra_headers={"X-Pronghorn-Thread-Id": thread_id},
            )
    with server.http(headers={"x-api-key": authed.alice_key}) as http:
        assert http.get(f"/api/langgraph/threads/{thread_id}").status_code == 200
    with server.http(headers={"x-api-key": authed.bob_key}) as http:
        assert http.get(f"/api/langgraph/threads/{thread_id}").status_code == 404


def test_leaving_a_stream_cancels_the_run(srv: InProcessServer):
    thread_id = str(uuid.uuid4())
    body = {
        "model": "agentish",
        "messages": [{"role": "user", "content": "hang in there"}],
        "stream": True,
    }
    with srv.http() as http:
        headers = {"X-Pronghorn-Thread-Id": thread_id}
        with http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as resp:
            run_id = resp.headers["x-pronghorn-run-id"]
            first = next(resp.iter_lines())
            assert first.startswith("data: ")  # the run is under way; now hang up
    sdk = srv.sync_sdk()
    sdk.runs.join(thread_id, run_id)
    assert sdk.runs.get(thread_id, run_id)["status"] == "interrupted"


async def test_leaving_a_blocking_request_cancels_the_run(srv: InProcessServer):
    sdk = srv.sdk()
    thread_id = (await sdk.threads.create())["thread_id"]
    body = {"model": "agentish", "messages": [{"role": "user", "content": "hang on"}]}
    async with srv.ahttp() as http:
        request = asyncio.ensure_future(
            http.post(
                "/v1/chat/completions", json=body, headers={"X-Pronghorn-Thread-Id": thread_id}
            )
        )
        # the thread's stream shows the run's first event once it is accepted
        async for part in await sdk.threads.join_stream(thread_id, last_event_id="-1"):
            if part.event == "metadata":
                run_id = part.data["run_id"]
                break
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
    await sdk.runs.join(thread_id, run_id)
    assert (await sdk.runs.get(thread_id, run_id))["status"] == "interrupted"


async def test_concurrent_first_turns_of_one_conversation_share_its_thread(srv: InProcessServer):
    body = {
        "model": "echo",
        "user": f"race-{uuid.uuid4()}",
        "messages": [{"role": "user", "content": "hi"}],
    }
    async with srv.ahttp() as http:
        answers = await asyncio.gather(
            *(http.post("/v1/chat/completions", json=body) for _ in range(4))
        )
    assert [r.status_code for r in answers] == [200] * 4
    assert len({r.headers["x-pronghorn-thread-id"] for r in answers}) == 1
