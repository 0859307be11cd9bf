"""ChatAnthropic built by the factory, talking HTTP to the local fake Anthropic server."""

from __future__ import annotations

import anthropic
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage

from fakes.anthropic_server import AnthropicReply, FakeAnthropicServer
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory


@pytest.fixture
def fake_anthropic():
    with FakeAnthropicServer() as server:
        yield server


def make(server: FakeAnthropicServer, **entry):
    cfg = {
        "name": "claude",
        "provider": "anthropic",
        "model": "claude-test",
        "base_url": server.base_url,
        "api_key": "sk-ant-test",
        **entry,
    }
    return ModelFactory(AppConfig.model_validate({"models": [cfg]}), env={}).create("claude")


async def test_streamed_text(fake_anthropic: FakeAnthropicServer):
    fake_anthropic.queue(AnthropicReply(text="Hello from the fake"))
    msg = await make(fake_anthropic).ainvoke([HumanMessage("hi")])
    assert msg.content == "Hello from the fake"
    [req] = fake_anthropic.requests
    assert req.path == "/v1/messages" and req.body["stream"] is True
    # (this SDK version sends the key as a bearer token; older ones used x-api-key)
    assert "sk-ant-test" in req.headers.get("x-api-key", req.headers.get("authorization", ""))


@pytest.mark.parametrize("status", [429, 500, 529])
async def test_the_client_itself_never_retries(fake_anthropic: FakeAnthropicServer, status):
    # The anthropic SDK retries twice by default; the agent's middleware retries instead.
    fake_anthropic.default = AnthropicReply.error(status)
    with pytest.raises(anthropic.APIStatusError) as info:
        await make(fake_anthropic, max_retries=4).ainvoke("hi")
    assert info.value.status_code == status
    assert len(fake_anthropic.requests) == 1


async def test_models_built_from_one_entry_share_one_http_client(
    fake_anthropic: FakeAnthropicServer,
):
    first, second = make(fake_anthropic), make(fake_anthropic)
    assert isinstance(first, ChatAnthropic) and isinstance(second, ChatAnthropic)
    assert second._async_client._client is first._async_client._client
    fake_anthropic.queue(AnthropicReply(text="a"), AnthropicReply(text="b"))
    assert (await first.ainvoke("hi")).content == "a"
    assert (await second.ainvoke("hi")).content == "b"
