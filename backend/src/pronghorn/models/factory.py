"""``ModelFactory``: which models exist, which one is the default, and building them.

Built from one ``AppConfig`` snapshot and cheap to construct, so the runtime simply builds a
new one when the config hot-reloads (``ModelFactory(new_config)``); nothing is cached
across snapshots. ``create`` returns a fresh client each call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from pronghorn.config.schema.app import AppConfig, ModelConfig
from pronghorn.models.demo import DEMO_DISPLAY_NAME, DEMO_MODEL_NAME, make_demo_model
from pronghorn.models.errors import UnknownModelError, UnsupportedProviderError
from pronghorn.models.providers import (
    build_anthropic,
    build_class,
    build_openai,
    import_object,
    is_usable,
)
from pronghorn.models.scripted import ScriptedChatModel

DEMO_MODEL = ModelConfig(name=DEMO_MODEL_NAME, display_name=DEMO_DISPLAY_NAME, provider="demo")
BUILTIN_PROVIDERS = ("openai", "anthropic", "scripted", "demo")


class ModelFactory:
    """Model catalogue and client factory for one config snapshot."""

    def __init__(self, config: AppConfig, *, env: Mapping[str, str] | None = None) -> None:
        self._config = config
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._by_name: dict[str, ModelConfig] = {}
        for entry in config.models:
            self._by_name.setdefault(entry.name, entry)

    @property
    def config(self) -> AppConfig:
        return self._config

    def is_usable(self, entry: ModelConfig) -> bool:
        """True when the entry needs no API key or has one."""
        return is_usable(entry, self._env)

    def _demo_listed(self) -> bool:
        return DEMO_MODEL_NAME not in self._by_name and not any(
            self.is_usable(m) for m in self._by_name.values()
        )

    def default_model_name(self) -> str:
        """``agent.default_model``, else the first usable model, else ``demo``."""
        if self._config.agent.default_model:
            return self._config.agent.default_model
        for entry in self._by_name.values():
            if self.is_usable(entry):
                return entry.name
        return DEMO_MODEL_NAME

    def list_models(self) -> list[dict[str, Any]]:  # JSON: the API's ModelInfo shape
        """Public descriptions for ``GET /api/models`` (never keys or URLs)."""
        default = self.default_model_name()
        entries = list(self._by_name.values())
        if self._demo_listed():
            entries.append(DEMO_MODEL)
        return [
            {
                "name": e.name,
                "display_name": e.display_name or e.name,
                "provider": e.provider,
                "model": e.model,
                "supports_vision": e.supports_vision,
                "supports_thinking": e.supports_thinking,
                "is_default": e.name == default,
                "is_demo": e.provider == "demo",
            }
            for e in entries
        ]

    def resolve(self, name: str | None) -> ModelConfig:
        """The entry for ``name`` (None: the default). ``demo`` always resolves."""
        key = name or self.default_model_name()
        if key in self._by_name:
            return self._by_name[key]
        if key == DEMO_MODEL_NAME:
            return DEMO_MODEL
        raise UnknownModelError(key)

    def create(
        self,
        name: str | None = None,
        *,
        thinking_enabled: bool = False,
        reasoning_effort: str | None = None,
    ) -> BaseChatModel:
        """A new chat-model client for ``name`` (None: the default). A model with
        ``thinking:`` switches gets their options for the thinking state asked for."""
        entry = self.resolve(name)
        if entry.thinking is not None:
            switches = entry.thinking
            extra = switches.when_enabled if thinking_enabled else switches.when_disabled
            entry = entry.model_copy(update={"options": {**entry.options, **extra}})
            thinking_enabled = thinking_enabled and entry.supports_thinking
        provider = entry.provider
        if provider == "openai":
            return build_openai(
                entry,
                self._env,
                thinking_enabled=thinking_enabled,
                reasoning_effort=reasoning_effort,
            )
        if provider == "anthropic":
            return build_anthropic(
                entry,
                self._env,
                thinking_enabled=thinking_enabled,
                reasoning_effort=reasoning_effort,
            )
        if provider == "scripted":
            # Validated from the config's plain dicts (what the constructor does too).
            return ScriptedChatModel.model_validate(
                {
                    "model": entry.model or entry.name,
                    "script": entry.script,
                    "rules": entry.rules,
                    **entry.options,
                }
            )
        if provider == "demo":
            return make_demo_model(name=entry.name, **entry.options)
        if ":" in provider:
            return build_class(entry)
        raise UnsupportedProviderError(
            f"model {entry.name!r}: unknown provider {provider!r} "
            f"(use one of {', '.join(BUILTIN_PROVIDERS)} or 'package.module:Class')"
        )

    def thinking_for(self, entry: ModelConfig, asked: bool | None) -> bool:
        """Whether a call to ``entry`` thinks: what the run asked, else the model's default;
        never for a model that cannot."""
        if not (entry.supports_thinking or entry.thinking is not None):
            return False
        if asked is None:
            return entry.thinking is not None and entry.thinking.enabled_by_default
        return asked

    def fallback_chain(self, name: str) -> list[str]:
        """The models that take over a failed call of ``name``, in order: its own
        ``fallbacks``, else ``agent.fallback_models``; unknown names and repeats left out."""
        entry = self.resolve(name)
        chain = entry.fallbacks
        if chain is None:
            chain = self._config.agent.fallback_models
        out: list[str] = []
        for other in chain:
            if other != entry.name and other not in out and other in self._by_name:
                out.append(other)
        return out

    def problems(self) -> list[str]:
        """Config mistakes worth reporting (doctor, config status); empty when all is well."""
        out: list[str] = []
        seen: set[str] = set()
        for entry in self._config.models:
            if entry.name in seen:
                out.append(f"models: duplicate name {entry.name!r} (the first one is used)")
            seen.add(entry.name)
            try:
                self._check(entry)
            except Exception as exc:  # report, never raise: this feeds a status page
                out.append(f"models.{entry.name}: {exc}")
        default = self._config.agent.default_model
        if default and default not in self._by_name and default != DEMO_MODEL_NAME:
            out.append(f"agent.default_model: unknown model {default!r}")
        for entry in self._config.models:
            for other in entry.fallbacks or []:
                if other not in self._by_name:
                    out.append(f"models.{entry.name}.fallbacks: unknown model {other!r}")
        for other in self._config.agent.fallback_models:
            if other not in self._by_name:
                out.append(f"agent.fallback_models: unknown model {other!r}")
        memory = self._config.memory.model
        if memory and memory not in self._by_name and memory != DEMO_MODEL_NAME:
            out.append(f"memory.model: unknown model {memory!r}")
        return out

    def _check(self, entry: ModelConfig) -> None:
        if entry.provider == "scripted":
            ScriptedChatModel.model_validate(
                {"script": entry.script, "rules": entry.rules, **entry.options}
            )
        elif ":" in entry.provider:
            import_object(entry.provider)
        elif entry.provider not in BUILTIN_PROVIDERS:
            raise UnsupportedProviderError(f"unknown provider {entry.provider!r}")
        elif not self.is_usable(entry):
            raise ValueError("no API key configured (the model will fail when used)")
