from __future__ import annotations

import httpx
import httpx2
import openai

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.builder import AgentParts, build_middlewares
from pronghorn.agent.middlewares.llm_errors import (
    CircuitBreakers,
    LLMErrorMiddleware,
    classify,
    is_transient,
    retry_after_s,
)
from pronghorn.agent.options import AgentOptions
from pronghorn.models.errors import build_error


def test_classification():
    assert is_transient(build_error("rate_limit"))
    assert is_transient(build_error("server_error"))
    assert is_transient(build_error("overloaded"))
    assert is_transient(build_error("timeout"))
    assert is_transient(build_error("connection"))
    assert is_transient(httpx.ReadTimeout("slow"))
    assert not is_transient(build_error("auth"))
    assert not is_transient(build_error("bad_request"))
    assert classify(build_error("auth")) == "auth"
    assert classify(build_error("rate_limit")) == "rate_limit"
    assert classify(build_error("context_length")) == "context_length"
    assert classify(ValueError("x")) == "error"


def test_retry_after_header_is_honoured():
    req = httpx2.Request("POST", "http://x")  # the OpenAI SDK's HTTP client
    resp = httpx2.Response(429, request=req, headers={"retry-after-ms": "30"}, json={})
    exc = openai.RateLimitError("slow down", response=resp, body=None)
    assert retry_after_s(exc) == 0.03
    mw = LLMErrorMiddleware("m", max_delay_s=1.0)
    assert mw.delay_s(5, exc) == 0.03
    assert 0 <= mw.delay_s(3, ValueError()) <= 1.0


async def test_transient_errors_are_retried(tmp_path):
    model = scripted(
        [
            {"raise": "rate_limit", "times": 1},
            {"raise": "server_error", "times": 1},
            {"text": "finally"},
        ]
    )
    graph = make_agent(tmp_path, model)
    out = await graph.ainvoke(user("hello"), thread_config())
    assert out["messages"][-1].content == "finally"
    assert len(model.requests) == 3


async def test_auth_error_is_not_retried_and_becomes_a_fallback_message(tmp_path):
    model = scripted([{"raise": "auth", "times": None}])
    graph = make_agent(tmp_path, model)
    out = await graph.ainvoke(user("hello"), thread_config())
    last = out["messages"][-1]
    fb = last.additional_kwargs["error_fallback"]
    assert fb["reason"] == "auth" and fb["error_type"] == "AuthenticationError"
    assert "authentication" in last.content
    assert len(model.requests) == 1


async def test_exhausted_retries_become_a_fallback_message(tmp_path):
    model = scripted([{"raise": "server_error", "times": None}])
    graph = make_agent(tmp_path, model)
    out = await graph.ainvoke(user("hello"), thread_config())
    assert out["messages"][-1].additional_kwargs["error_fallback"]["reason"] == "transient"
    assert len(model.requests) == 3


async def test_circuit_breaker_opens_per_model(tmp_path):
    model = scripted([{"raise": "server_error", "times": None}])
    breakers = CircuitBreakers(failure_threshold=3, recovery_s=60)
    parts = AgentParts(
        model=model,
        model_name="flaky",
        tools=[],
        data_dir=tmp_path,
        breakers=breakers,
        retry_base_delay_s=0.0,
    )
    graph = make_agent(tmp_path, model, middleware=build_middlewares(parts, AgentOptions()))
    await graph.ainvoke(user("one"), thread_config())
    assert breakers.is_open("flaky")
    calls = len(model.requests)
    out = await graph.ainvoke(user("two"), thread_config())
    assert len(model.requests) == calls  # no provider call while open
    assert out["messages"][-1].additional_kwargs["error_fallback"]["reason"] == "circuit_open"
    assert not breakers.is_open("other-model")


def test_breaker_half_opens_after_recovery():
    b = CircuitBreakers(failure_threshold=2, recovery_s=0.0)
    b.failure("m")
    b.failure("m")
    assert b.is_open("m")
    assert b.allow("m")  # recovery elapsed: one probe
    b.success("m")
    assert not b.is_open("m")
