"""ModelFactory: catalogue, defaults, demo fallback, resolution and client construction."""

from __future__ import annotations

import json

import openai
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI

from pronghorn.config.schema.app import AppConfig
from pronghorn.models import (
    MissingAPIKeyError,
    ModelFactory,
    ScriptedChatModel,
    UnknownModelError,
    UnsupportedProviderError,
)


def factory(models: list[dict], default: str | None = None, env: dict | None = None):
    config = AppConfig.model_validate({"models": models, "agent": {"default_model": default}})
    return ModelFactory(config, env=env or {})


def test_no_models_means_the_demo_model():
    f = factory([])
    assert f.default_model_name() == "demo"
    [demo] = f.list_models()
    assert demo == {
        "name": "demo",
        "display_name": "Offline demo model",
        "provider": "demo",
        "model": "",
        "supports_vision": False,
        "supports_thinking": False,
        "is_default": True,
        "is_demo": True,
    }
    model = f.create(None)
    assert isinstance(model, ScriptedChatModel) and model.model_name == "demo"


def test_unusable_models_fall_back_to_demo_but_stay_listed():
    f = factory([{"name": "gpt", "provider": "openai", "model": "gpt-4o"}])
    assert f.default_model_name() == "demo"
    assert [m["name"] for m in f.list_models()] == ["gpt", "demo"]
    with pytest.raises(MissingAPIKeyError, match="no API key"):
        f.create("gpt")


def test_first_usable_model_is_the_default():
    models = [
        {"name": "claude", "provider": "anthropic", "model": "claude-x"},
        {"name": "local", "provider": "openai", "model": "llama", "base_url": "http://ollama:11434/v1"},
        {"name": "gpt", "provider": "openai", "model": "gpt-4o", "api_key": "sk-secret-1"},
    ]  # fmt: skip
    f = factory(models)
    assert f.default_model_name() == "local"
    assert [m["name"] for m in f.list_models()] == ["claude", "local", "gpt"]  # no demo
    assert [m["is_default"] for m in f.list_models()] == [False, True, False]
    # The env key makes claude usable (no base_url, so the conventional variable applies).
    assert factory(models, env={"ANTHROPIC_API_KEY": "k"}).default_model_name() == "claude"
    assert factory(models, default="gpt").default_model_name() == "gpt"


def test_env_key_is_never_sent_to_a_third_party_base_url():
    models = [{"name": "ds", "provider": "openai", "base_url": "https://api.deepseek.com/v1"}]
    f = factory(models, env={"OPENAI_API_KEY": "sk-openai"})
    assert f.default_model_name() == "demo"
    with pytest.raises(MissingAPIKeyError):
        f.create("ds")


def test_list_models_never_contains_secrets():
    f = factory(
        [{"name": "gpt", "model": "gpt-4o", "api_key": "sk-very-secret", "base_url": "https://x.example/v1"}]
    )  # fmt: skip
    dumped = json.dumps(f.list_models())
    assert "sk-very-secret" not in dumped and "x.example" not in dumped


def test_unknown_name_raises():
    f = factory([{"name": "s", "provider": "scripted", "script": [{"text": "hi"}]}])
    with pytest.raises(UnknownModelError) as info:
        f.resolve("nope")
    assert info.value.name == "nope" and "nope" in str(info.value)
    with pytest.raises(UnknownModelError):
        f.create("nope")
    assert f.resolve("demo").provider == "demo"  # always available, even when not listed
    assert f.resolve(None).name == "s"


async def test_scripted_entry_from_config():
    f = factory(
        [{"name": "s", "provider": "scripted", "rules": [{"match": "ping", "text": "pong"}],
          "options": {"fallback": {"text": "?"}}}]
    )  # fmt: skip
    model = f.create("s")
    assert (await model.ainvoke("ping")).content == "pong"
    assert (await model.ainvoke("other")).content == "?"


async def test_module_class_provider():
    f = factory(
        [{"name": "custom", "provider": "pronghorn.models.scripted:ScriptedChatModel",
          "model": "my-model", "options": {"script": [{"text": "from a class"}]}},
         {"name": "bad", "provider": "collections:OrderedDict"},
         {"name": "weird", "provider": "nonsense"}]
    )  # fmt: skip
    model = f.create("custom")
    assert isinstance(model, ScriptedChatModel) and model.model_name == "my-model"
    assert (await model.ainvoke("x")).content == "from a class"
    with pytest.raises(UnsupportedProviderError):
        f.create("bad")
    with pytest.raises(UnsupportedProviderError):
        f.create("weird")
    assert any("weird" in p for p in f.problems())


def test_openai_client_settings():
    f = factory(
        [{"name": "o", "model": "o4-mini", "api_key": "sk-1", "base_url": "https://x.example/v1",
          "max_tokens": 500, "temperature": 0.2, "timeout_s": 30, "max_retries": 4,
          "stream_chunk_timeout_s": 12, "supports_thinking": True}]
    )  # fmt: skip
    m = f.create("o", reasoning_effort="high")
    assert isinstance(m, ChatOpenAI)
    assert m.openai_api_key is not None
    assert m.model_name == "o4-mini" and m.openai_api_key.get_secret_value() == "sk-1"
    assert m.openai_api_base == "https://x.example/v1"
    assert (m.max_tokens, m.temperature, m.request_timeout) == (500, 0.2, 30)
    # Retries belong to the agent's middleware: the SDK never retries on its own.
    assert m.max_retries == 0 and m.root_async_client.max_retries == 0
    assert m.streaming and m.stream_usage and m.stream_chunk_timeout == 12
    assert m.reasoning_effort == "high"
    # A model that does not support reasoning never gets the parameter.
    plain = factory([{"name": "p", "model": "gpt-4o", "api_key": "k"}]).create(
        "p", reasoning_effort="high"
    )
    assert isinstance(plain, ChatOpenAI) and plain.reasoning_effort is None


def test_sdk_retries_are_off_even_when_options_ask_for_them():
    f = factory(
        [{"name": "o", "model": "gpt-4o", "api_key": "k", "max_retries": 5,
          "options": {"max_retries": 3}},
         {"name": "c", "provider": "anthropic", "model": "claude-x", "api_key": "k",
          "max_retries": 5, "options": {"max_retries": 3}}]
    )  # fmt: skip
    oa, claude = f.create("o"), f.create("c")
    assert isinstance(oa, ChatOpenAI) and isinstance(claude, ChatAnthropic)
    assert oa.max_retries == 0 and oa.root_async_client.max_retries == 0
    assert claude.max_retries == 0 and claude._async_client.max_retries == 0


def test_defaults_suit_thinking_models():
    f = factory([{"name": "o", "model": "o4-mini", "api_key": "k"}])
    entry = f.resolve("o")
    assert entry.stream_chunk_timeout_s == 240 and entry.timeout_s == 120
    m = f.create("o")
    assert isinstance(m, ChatOpenAI) and m.stream_chunk_timeout == 240
    # httpx's read timeout never cuts a silence the chunk timeout still allows.
    timeout = m.root_async_client.timeout
    assert isinstance(timeout, openai.Timeout)  # the SDK's (httpx2's) type, not httpx's
    assert (timeout.read, timeout.connect) == (240, 120)
    sockets = m.root_async_client._client.timeout  # what the http client applies per request
    assert (sockets.read, sockets.connect) == (240, 120)


def test_anthropic_thinking_budget():
    f = factory(
        [{"name": "c", "provider": "anthropic", "model": "claude-x", "api_key": "k",
          "supports_thinking": True, "thinking_budget_tokens": 3000, "temperature": 0.3}]
    )  # fmt: skip
    m = f.create("c", thinking_enabled=True)
    assert isinstance(m, ChatAnthropic)
    assert m.thinking == {"type": "enabled", "budget_tokens": 3000}
    assert m.max_tokens is not None and m.max_tokens > 3000 and m.temperature is None
    off = f.create("c")
    assert isinstance(off, ChatAnthropic)
    assert off.thinking is None and off.temperature == 0.3


def test_problems_report_config_mistakes():
    f = factory(
        [{"name": "s", "provider": "scripted", "script": [{"txt": "typo"}]},
         {"name": "s", "provider": "scripted"}],
        default="missing",
    )  # fmt: skip
    problems = "\n".join(f.problems())
    assert "duplicate name 's'" in problems
    assert "models.s:" in problems
    assert "unknown model 'missing'" in problems
