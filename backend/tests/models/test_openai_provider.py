"""ChatOpenAI built by the factory, talking HTTP to the local fake OpenAI server."""

from __future__ import annotations

import httpx
import openai
import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from fakes.openai_server import FakeOpenAIServer, Reply
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return "sunny"


def make(server: FakeOpenAIServer, **entry):
    cfg = {
        "name": "fake",
        "provider": "openai",
        "model": "fake-gpt",
        "base_url": server.base_url,
        "api_key": "sk-test-123",
        "max_retries": 2,
        "timeout_s": 10,
        **entry,
    }
    factory = ModelFactory(AppConfig.model_validate({"models": [cfg]}), env={})
    return factory.create("fake")


async def stream(model, messages) -> list[AIMessageChunk]:
    return [c async for c in model.astream(messages)]


def merged(chunks):
    out = chunks[0]
    for c in chunks[1:]:
        out = out + c
    return out


async def test_streaming_text_with_usage(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.text("Hello from the fake server"))
    chunks = await stream(make(fake_openai), [HumanMessage("hi")])
    words = [c.content for c in chunks if c.content]
    assert words == ["Hello ", "from ", "the ", "fake ", "server"]
    full = merged(chunks)
    assert full.content == "Hello from the fake server"
    assert full.usage_metadata and full.usage_metadata["output_tokens"] > 0
    assert full.response_metadata["finish_reason"] == "stop"
    [req] = fake_openai.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test-123"
    assert req.body["model"] == "fake-gpt" and req.body["stream"] is True
    assert req.body["stream_options"] == {"include_usage": True}
    assert req.body["messages"] == [{"role": "user", "content": "hi"}]


async def test_invoke_also_streams(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.text("one shot"))
    msg = await make(fake_openai).ainvoke("hi")
    assert msg.content == "one shot" and msg.usage_metadata
    assert fake_openai.requests[0].body["stream"] is True


async def test_streamed_tool_call(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.tool_call("get_weather", {"city": "Lisbon, Portugal"}, id="call_w1"))
    model = make(fake_openai).bind_tools([get_weather])
    chunks = await stream(model, [HumanMessage("weather?")])
    assert sum(1 for c in chunks if c.tool_call_chunks) > 2
    full = merged(chunks)
    [call] = full.tool_calls
    assert call["name"] == "get_weather" and call["id"] == "call_w1"
    assert call["args"] == {"city": "Lisbon, Portugal"}
    assert full.response_metadata["finish_reason"] == "tool_calls"
    sent = fake_openai.requests[0].body["tools"]
    assert sent[0]["function"]["name"] == "get_weather"


@pytest.mark.parametrize(
    ("status", "error"), [(429, openai.RateLimitError), (500, openai.InternalServerError)]
)
async def test_the_client_itself_never_retries(fake_openai: FakeOpenAIServer, status, error):
    # Retries are the agent middleware's job (tests/agent/test_model_retries.py); an SDK that
    # retried too would multiply them. Even with max_retries configured, one request.
    fake_openai.default = Reply.error(status, headers={"retry-after-ms": "10"})
    with pytest.raises(error):
        await make(fake_openai, max_retries=4).ainvoke("hi")
    assert len(fake_openai.requests) == 1


async def test_unauthorized_raises_a_clear_error_without_retry(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.error(401, "Incorrect API key provided"))
    with pytest.raises(openai.AuthenticationError) as info:
        await make(fake_openai).ainvoke("hi")
    assert info.value.status_code == 401
    assert "Incorrect API key provided" in str(info.value)
    assert len(fake_openai.requests) == 1


async def test_dropped_stream_raises(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply.dropped("this answer is cut in the middle", after_chunks=3))
    got: list[AIMessageChunk] = []
    with pytest.raises((httpx.HTTPError, openai.APIError)):
        async for c in make(fake_openai).astream("hi"):
            got.append(c)
    assert "".join(str(c.content) for c in got) == "this answer "


async def test_stalled_stream_hits_the_chunk_timeout(fake_openai: FakeOpenAIServer):
    fake_openai.queue(Reply(content="slow words here", chunk_delay_s=1.5))
    with pytest.raises(TimeoutError):
        await make(fake_openai, stream_chunk_timeout_s=0.3).ainvoke("hi")


async def test_models_built_from_one_entry_share_one_http_client(fake_openai: FakeOpenAIServer):
    # A read timeout longer than timeout_s makes the timeout an httpx.Timeout; it must still
    # be hashable, or langchain-openai builds (and never closes) one client per model.
    first = make(fake_openai, stream_chunk_timeout_s=90)
    second = make(fake_openai, stream_chunk_timeout_s=90)
    assert isinstance(first, ChatOpenAI) and isinstance(second, ChatOpenAI)
    client = first.root_async_client._client
    assert second.root_async_client._client is client
    t = client.timeout  # connect/write/pool 10 s, read 90 s, as floats (not nested objects)
    assert (t.connect, t.read, t.write, t.pool) == (10, 90, 10, 10)
    other = make(fake_openai, stream_chunk_timeout_s=60)
    assert isinstance(other, ChatOpenAI)
    assert other.root_async_client._client is not client  # another timeout, another client
    fake_openai.queue(Reply.text("a"), Reply.text("b"))
    assert (await first.ainvoke("hi")).content == "a"
    assert (await second.ainvoke("hi")).content == "b"


def test_the_timeout_is_hashable_and_keeps_connect_and_read_apart():
    from pronghorn.config.schema.app import ModelConfig
    from pronghorn.models.providers import openai_timeout

    cfg = ModelConfig(name="m", provider="openai", timeout_s=5, stream_chunk_timeout_s=30)
    timeout = openai_timeout(cfg)
    assert isinstance(timeout, openai.Timeout)  # the SDK's type (httpx2's), not httpx's
    assert (timeout.connect, timeout.read, timeout.write, timeout.pool) == (5, 30, 5, 5)
    assert hash(timeout) == hash(openai_timeout(cfg)) and timeout == openai_timeout(cfg)
    short = ModelConfig(name="m", provider="openai", timeout_s=30, stream_chunk_timeout_s=5)
    assert openai_timeout(short) == 30
