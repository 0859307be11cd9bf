"""Build one chat-model client from one ``ModelConfig`` entry.

Providers: ``openai`` (any OpenAI-compatible API), ``anthropic``, ``scripted``, ``demo``, or
``package.module:Class``. API keys: the entry's ``api_key``; the conventional environment
variable (``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``) is only used when the entry has no
``base_url``, so a key is never sent to a third-party endpoint it was not meant for.
Local endpoints (loopback, private addresses, ``*.local``, single-label hosts such as a
compose service ``ollama``) need no key.

Retries: the SDK clients are built with ``max_retries=0``. One model call is retried by the
agent's retry middleware only (``agent/middlewares/llm_errors.py``, ``max_retries`` of the
entry), so SDK and middleware retries never multiply.
"""

from __future__ import annotations

import importlib
import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from langchain_core.language_models import BaseChatModel

from pronghorn.config.schema.app import ModelConfig
from pronghorn.models.errors import MissingAPIKeyError, UnsupportedProviderError

if TYPE_CHECKING:
    from pronghorn.models.openai_timeout import HashableTimeout

_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_KEYLESS_PLACEHOLDER = "not-needed"
_EFFORT_BUDGET = {"low": 2048, "medium": 8192, "high": 16384}
SDK_MAX_RETRIES = 0  # retries belong to the agent's middleware, never to the SDK as well


def is_local_url(url: str | None) -> bool:
    """A base URL on this machine or a private network (no API key expected)."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a single-label name: a compose service or LAN host
    return ip.is_loopback or ip.is_private or ip.is_link_local


def api_key_for(cfg: ModelConfig, env: Mapping[str, str]) -> str | None:
    """The key this entry will use, or None."""
    if cfg.api_key is not None and cfg.api_key.get_secret_value():
        return cfg.api_key.get_secret_value()
    var = _KEY_ENV.get(cfg.provider)
    if var and cfg.base_url is None and env.get(var):
        return env[var]
    return None


def needs_key(cfg: ModelConfig) -> bool:
    return cfg.provider in _KEY_ENV and not is_local_url(cfg.base_url)


def is_usable(cfg: ModelConfig, env: Mapping[str, str]) -> bool:
    """Can this entry be called as configured (needs no key, or has one)?"""
    return not needs_key(cfg) or api_key_for(cfg, env) is not None


def _key_or_raise(cfg: ModelConfig, env: Mapping[str, str]) -> str:
    key = api_key_for(cfg, env)
    if key is not None:
        return key
    if not needs_key(cfg):
        return _KEYLESS_PLACEHOLDER
    where = f"or set {_KEY_ENV[cfg.provider]}" if cfg.base_url is None else "(base_url is set)"
    raise MissingAPIKeyError(
        f"model {cfg.name!r} (provider {cfg.provider}) has no API key: "
        f"set `api_key: ${{MY_KEY_VAR}}` on the entry {where}"
    )


def openai_timeout(cfg: ModelConfig) -> float | HashableTimeout:
    """``timeout_s`` for connect/write/pool; the socket read timeout is never shorter than
    ``stream_chunk_timeout_s``, so a thinking model's long silence is judged by the chunk
    timeout, not cut earlier by httpx. Always hashable (see ``HashableTimeout``)."""
    from pronghorn.models.openai_timeout import HashableTimeout  # the openai SDK: on use

    if cfg.stream_chunk_timeout_s <= cfg.timeout_s:
        return cfg.timeout_s
    return HashableTimeout(cfg.timeout_s, read=cfg.stream_chunk_timeout_s)


def build_openai(
    cfg: ModelConfig,
    env: Mapping[str, str],
    *,
    thinking_enabled: bool,
    reasoning_effort: str | None,
) -> BaseChatModel:
    from pronghorn.models.openai_reasoning import ReasoningChatOpenAI

    kwargs: dict[str, Any] = {  # the model class's constructor arguments, of many types
        "model": cfg.model or cfg.name,
        "api_key": _key_or_raise(cfg, env),
        "timeout": openai_timeout(cfg),
        "streaming": True,
        "stream_usage": True,
        "stream_chunk_timeout": cfg.stream_chunk_timeout_s,
    }
    if cfg.base_url:
        kwargs["base_url"] = cfg.base_url
    if cfg.max_tokens is not None:
        kwargs["max_tokens"] = cfg.max_tokens
    if cfg.temperature is not None:
        kwargs["temperature"] = cfg.temperature
    effort = reasoning_effort or cfg.reasoning_effort
    if thinking_enabled and effort is None and cfg.supports_thinking:
        effort = "medium"
    if effort and (cfg.supports_thinking or cfg.reasoning_effort):
        kwargs["reasoning_effort"] = effort
    kwargs.update(cfg.options)
    kwargs["max_retries"] = SDK_MAX_RETRIES
    return ReasoningChatOpenAI(**kwargs)


def build_anthropic(
    cfg: ModelConfig,
    env: Mapping[str, str],
    *,
    thinking_enabled: bool,
    reasoning_effort: str | None,
) -> BaseChatModel:
    from langchain_anthropic import ChatAnthropic

    kwargs: dict[str, Any] = {  # the model class's constructor arguments, of many types
        "model": cfg.model or cfg.name,
        "api_key": _key_or_raise(cfg, env),
        "timeout": cfg.timeout_s,
        "streaming": True,
        "stream_usage": True,
    }
    if cfg.base_url:
        kwargs["base_url"] = cfg.base_url
    if cfg.max_tokens is not None:
        kwargs["max_tokens"] = cfg.max_tokens
    if cfg.temperature is not None:
        kwargs["temperature"] = cfg.temperature
    if thinking_enabled and cfg.supports_thinking:
        budget = cfg.thinking_budget_tokens or _EFFORT_BUDGET[reasoning_effort or "medium"]
        kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
        # Anthropic: max_tokens must exceed the budget, and temperature must stay default.
        if cfg.max_tokens is None or cfg.max_tokens <= budget:
            kwargs["max_tokens"] = budget + 4096
        kwargs.pop("temperature", None)
    kwargs.update(cfg.options)
    kwargs["max_retries"] = SDK_MAX_RETRIES
    return ChatAnthropic(**kwargs)


# Any: an object named in config.yaml, imported by name (a chat model class, a factory): its
# type is whatever the named module defines, checked by the caller that uses it.
def import_object(path: str) -> Any:
    """``package.module:Attr`` (``Attr`` may be dotted) → the object."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise UnsupportedProviderError(f"provider {path!r} is not 'package.module:Class'")
    obj: Any = importlib.import_module(module_name)  # Any: see above
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def build_class(cfg: ModelConfig) -> BaseChatModel:
    cls = import_object(cfg.provider)
    kwargs = dict(cfg.options)
    if cfg.model:
        kwargs.setdefault("model", cfg.model)
    model = cls(**kwargs)
    if not isinstance(model, BaseChatModel):
        raise UnsupportedProviderError(
            f"provider {cfg.provider!r} built a {type(model).__name__}, not a BaseChatModel"
        )
    return model
