"""Model fallback chains through the whole gateway, against two local OpenAI-compatible
servers (one per model): a retryable failure of the first model is answered by the second,
the answer, its events, the usage and the metrics say which; a non-retryable one does not
fall back unless `fallback_on` says so; a chain whose every model fails ends the run with
an error naming each; an open circuit is skipped (issue 28, point 1)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from fakes.openai_server import FakeOpenAIServer, Reply
from pronghorn.config.schema.app import AppConfig
from pronghorn.models import ModelFactory
from support.inproc import InProcessServer
from support.sse import sse_events

API = "/api/langgraph"


@pytest.fixture
def second_openai() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def entry(name: str, server: FakeOpenAIServer, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "openai",
        "model": f"model-{name}",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "max_retries": 0,
        **extra,
    }


def agent_calls(server: FakeOpenAIServer) -> int:
    """The lead agent's calls to a server (the title of a new thread is asked of the run's
    own model too, outside the chain)."""
    return sum("title only" not in json.dumps(r.body) for r in server.requests)


def run_stream(app: InProcessServer, model: str, text: str = "hi") -> tuple[str, list]:
    """A lead-agent run on a new thread with `model`, streamed (values, messages, custom)."""
    with app.http(timeout=120) as http:
        tid = http.post(f"{API}/threads", json={}).json()["thread_id"]
        resp = http.post(
            f"{API}/threads/{tid}/runs/stream",
            json={
                "assistant_id": "lead_agent",
                "input": {"messages": [{"role": "user", "content": text}]},
                "context": {"model_name": model},
                "stream_mode": ["values", "messages-tuple", "custom"],
            },
        )
        assert resp.status_code == 200, resp.text
    return tid, sse_events(resp.text)


def last_ai(events: list) -> dict[str, Any]:
    values = [data for ev, data in events if ev == "values"]
    return [m for m in values[-1]["messages"] if m["type"] == "ai"][-1]


def test_a_retryable_failure_is_answered_by_the_next_model(
    start_app, fake_openai: FakeOpenAIServer, second_openai: FakeOpenAIServer
):
    fake_openai.queue(Reply.error(503, "upstream down"))
    second_openai.queue(Reply.text("hello from b"))
    app = start_app(models=[entry("a", fake_openai, fallbacks=["b"]), entry("b", second_openai)])
    tid, events = run_stream(app, "a")
    answer = last_ai(events)
    assert answer["content"] == "hello from b"
    assert answer["response_metadata"]["pronghorn_model"] == "b"
    assert answer["response_metadata"]["pronghorn_fallback_from"] == ["a"]
    custom = [data for ev, data in events if ev == "custom"]
    assert custom and custom[0]["type"] == "model_fallback"
    assert (custom[0]["from"], custom[0]["to"], custom[0]["reason"]) == ("a", "b", "transient")
    assert agent_calls(fake_openai) == 1 and agent_calls(second_openai) == 1
    with app.http() as http:
        usage = http.get(f"/api/threads/{tid}/token-usage").json()
        assert list(usage["by_model"]) == ["b"]
        metrics = http.get("/metrics").text
    assert (
        'pronghorn_model_fallbacks_total{from_model="a",reason="transient",to_model="b"} 1.0'
        in metrics
    )
    with sqlite3.connect(app.workdir / "data" / "pronghorn.db") as conn:
        rows = conn.execute(
            "SELECT detail FROM audit_log WHERE action = 'model.fallback'"
        ).fetchall()
    assert len(rows) == 1 and '"to": "b"' in rows[0][0].replace('":"', '": "')


def test_tokens_already_streamed_restart_as_a_new_message(
    start_app, fake_openai: FakeOpenAIServer, second_openai: FakeOpenAIServer
):
    fake_openai.queue(Reply.dropped("this answer breaks off in the middle", after_chunks=3))
    second_openai.queue(Reply.text("the whole answer"))
    app = start_app(models=[entry("a", fake_openai, fallbacks=["b"]), entry("b", second_openai)])
    _, events = run_stream(app, "a")
    chunks = [data for ev, data in events if ev == "messages"]
    ids = [c[0]["id"] for c in chunks if c[0].get("type", "").startswith("AIMessage")]
    partial = [c[0]["content"] for c in chunks if c[0]["id"] == ids[0]]
    assert "".join(partial).startswith("this answer")  # the client saw model a's tokens
    order = [ev for ev, _ in events]
    first_b = next(
        i for i, (ev, data) in enumerate(events) if ev == "messages" and data[0]["id"] != ids[0]
    )
    assert order.index("custom") < first_b  # the restart is announced before b's tokens
    assert len(set(ids)) == 2  # b's answer is a message of its own
    answer = last_ai(events)
    assert answer["content"] == "the whole answer"
    values = [data for ev, data in events if ev == "values"][-1]
    assert [m["content"] for m in values["messages"] if m["type"] == "ai"] == ["the whole answer"]


def test_non_retryable_errors_fall_back_only_when_configured(
    start_app, fake_openai: FakeOpenAIServer, second_openai: FakeOpenAIServer
):
    fake_openai.queue(Reply.error(401, "bad key"), Reply.error(401, "bad key"))
    second_openai.queue(Reply.text("b answers"))
    app = start_app(
        models=[
            entry("a", fake_openai, fallbacks=["b"]),
            entry("a2", fake_openai, fallbacks=["b"], fallback_on=["auth"]),
            entry("b", second_openai),
        ]
    )
    tid, events = run_stream(app, "a")
    with app.http() as http:
        run = http.get(f"{API}/threads/{tid}/runs").json()[0]
    assert run["status"] == "error"
    assert second_openai.requests == []
    assert "a: auth" in json.dumps([d for ev, d in events if ev == "error"])
    _, events = run_stream(app, "a2")
    assert last_ai(events)["content"] == "b answers"


def test_a_chain_whose_every_model_fails_names_each_failure(
    start_app, fake_openai: FakeOpenAIServer, second_openai: FakeOpenAIServer
):
    fake_openai.queue(Reply.error(500, "a is broken"))
    second_openai.queue(Reply.error(429, "b is busy"))
    app = start_app(
        models=[entry("a", fake_openai), entry("b", second_openai)],
        agent={"fallback_models": ["b"]},  # the default chain
    )
    tid, events = run_stream(app, "a")
    errors = [d for ev, d in events if ev == "error"]
    assert len(errors) == 1
    text = json.dumps(errors[0])
    assert "a: transient" in text and "a is broken" in text
    assert "b: rate_limit" in text and "b is busy" in text
    with app.http() as http:
        run = http.get(f"{API}/threads/{tid}/runs").json()[0]
    assert run["status"] == "error"


def test_an_open_circuit_is_skipped(
    start_app, fake_openai: FakeOpenAIServer, second_openai: FakeOpenAIServer
):
    # Nothing queued: model a answers every call with a 500.
    second_openai.queue(*[Reply.text(f"b{i}") for i in range(6)])
    app = start_app(models=[entry("a", fake_openai, fallbacks=["b"]), entry("b", second_openai)])
    for i in range(5):  # five failures in a row open a's breaker
        _, events = run_stream(app, "a")
        assert last_ai(events)["content"] == f"b{i}"
    _, events = run_stream(app, "a")
    assert last_ai(events)["content"] == "b5"
    assert agent_calls(fake_openai) == 5  # the sixth call never reached model a
    custom = [d for ev, d in events if ev == "custom"]
    assert custom[0]["reason"] == "circuit_open"


async def test_thinking_switches_per_model(fake_openai: FakeOpenAIServer):
    think = {
        "enabled_by_default": True,
        "when_enabled": {"extra_body": {"thinking": {"type": "enabled"}}},
        "when_disabled": {"extra_body": {"thinking": {"type": "disabled"}}},
    }
    config = AppConfig.model_validate(
        {"models": [entry("t", fake_openai, thinking=think), entry("plain", fake_openai)]}
    )
    models = ModelFactory(config, env={})
    t, plain = models.resolve("t"), models.resolve("plain")
    assert models.thinking_for(t, None) is True  # the model's default
    assert models.thinking_for(t, False) is False
    assert models.thinking_for(plain, True) is False  # a plain model never thinks
    fake_openai.queue(Reply.text("x"), Reply.text("y"))
    await models.create("t", thinking_enabled=True).ainvoke("q")
    await models.create("t", thinking_enabled=False).ainvoke("q")
    bodies = [r.body for r in fake_openai.requests]
    assert bodies[0]["thinking"] == {"type": "enabled"}
    assert bodies[1]["thinking"] == {"type": "disabled"}


def test_unknown_fallback_names_are_reported(fake_openai: FakeOpenAIServer):
    config = AppConfig.model_validate(
        {
            "models": [entry("a", fake_openai, fallbacks=["nope", "a"])],
            "agent": {"fallback_models": ["gone"]},
        }
    )
    models = ModelFactory(config, env={})
    problems = models.problems()
    assert "models.a.fallbacks: unknown model 'nope'" in problems
    assert "agent.fallback_models: unknown model 'gone'" in problems
    assert models.fallback_chain("a") == []  # unknown names and itself left out
