"""One retry policy per model call: the agent's middleware retries, the SDK never does.

A live server runs ``lead_agent`` on the real ``openai`` provider against the fake OpenAI
server, which always fails. The fake counts what arrives: one model call must make exactly
``max_retries + 1`` requests (before the fix the SDK's own 2 retries multiplied them: 3 × 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_client

from fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from support.live import LiveServer, base_config


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
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAIServer) -> Iterator[LiveServer]:
    # One entry per test: the circuit breaker (per model, 5 failures) must not interfere.
    models = [
        _entry("r3-429", fake, 3),
        _entry("r3-500", fake, 3),
        _entry("r0", fake, 0),
        _entry("default-retries", fake, 2),
    ]
    cfg = base_config(models=models, sandbox={"isolation": "none"})
    server = LiveServer(tmp_path_factory.mktemp("retries"), cfg).start(timeout=120)
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
    srv: LiveServer, fake: FakeOpenAIServer, model: str, status: int, attempts: int, reason: str
):
    fake.default = Reply.error(status, headers={"retry-after-ms": "10"})
    client = get_client(url=srv.api)
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        tid,
        "lead_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context={"model_name": model},
    )
    last = out["messages"][-1]
    assert last["additional_kwargs"]["error_fallback"]["reason"] == reason
    assert len(_agent_calls(fake, model)) == attempts
    [run] = await client.runs.list(tid)
    assert run["status"] == "success"
