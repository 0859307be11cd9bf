"""One retry policy per model call: the agent's middleware retries, the SDK never does.

A live server runs ``lead_agent`` on the real ``openai`` provider against the fake OpenAI
server, which always fails. The fake counts what arrives: one model call must make exactly
``max_retries + 1`` requests (before the fix the SDK's own 2 retries multiplied them: 3 × 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.helpers import make_agent, thread_config, user
from fakes.anthropic_server import AnthropicReply, FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def _entry(name: str, fake: FakeOpenAIServer, retries: int) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "openai",
        "model": name,
        "base_url": fake.base_url,
        "api_key": "sk-test",
        "max_retries": retries,
    }


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAIServer
) -> Iterator[InProcessServer]:
    # One entry per test: the circuit breaker (per model, 5 failures) must not interfere.
    models = [
        _entry("r3-429", fake, 3),
        _entry("r3-500", fake, 3),
        _entry("r0", fake, 0),
        _entry("default-retries", fake, 2),
    ]
    cfg = base_config(models=models, sandbox={"isolation": "none"})
    server = InProcessServer(tmp_path_factory.mktemp("retries"), cfg).start(timeout=120)
    yield server
    server.stop()


def _agent_calls(fake: FakeOpenAIServer, model: str) -> list[RecordedRequest]:
    """Requests of the agent loop (they start with the system prompt; a title call does not)."""
    return [
        r
        for r in fake.requests
        if r.body.get("model") == model and r.body["messages"][0]["role"] == "system"
    ]


@pytest.mark.parametrize(
    ("model", "status", "attempts", "reason"),
    [
        ("r3-429", 429, 4, "rate_limit"),
        ("r3-500", 500, 4, "transient"),
        ("r0", 429, 1, "rate_limit"),
        ("default-retries", 500, 3, "transient"),
    ],
)
async def test_a_failing_provider_gets_exactly_the_configured_attempts(
    srv: InProcessServer,
    fake: FakeOpenAIServer,
    model: str,
    status: int,
    attempts: int,
    reason: str,
):
    fake.default = Reply.error(status, headers={"retry-after-ms": "10"})
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        tid,
        "lead_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context={"model_name": model},
    )
    last = as_state(out)["messages"][-1]
    assert last["additional_kwargs"]["error_fallback"]["reason"] == reason
    assert len(_agent_calls(fake, model)) == attempts
    [run] = await client.runs.list(tid)
    assert run["status"] == "success"


async def test_anthropic_through_the_agent_gets_the_middleware_attempts_only(tmp_path: Path):
    # The real anthropic provider in the agent loop (no server process): the default chain
    # makes 3 attempts; with the SDK's own 2 retries per attempt it would be 9 requests.
    entry = {"name": "claude", "provider": "anthropic", "model": "claude-test",
             "api_key": "sk-ant-test", "max_retries": 2}  # fmt: skip
    with FakeAnthropicServer(default=AnthropicReply.error(529)) as fake_claude:
        entry["base_url"] = fake_claude.base_url
        factory = ModelFactory(AppConfig.model_validate({"models": [entry]}), env={})
        graph = make_agent(tmp_path, factory.create("claude"))
        out = await graph.ainvoke(user("hello"), thread_config())
        assert out["messages"][-1].additional_kwargs["error_fallback"]["reason"] == "transient"
        assert len(fake_claude.requests) == 3
