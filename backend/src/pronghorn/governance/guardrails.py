"""Guardrails: a pluggable check of every tool call and final answer.

A provider is any object with one or both of these (sync or async) methods:

* ``check_tool_call(tool: str, args: dict) -> str | None`` — a reason to block, or None;
* ``check_answer(text: str) -> str | None`` — a reason to withhold the final answer.

``RuleGuardrail`` is the built-in one (guardrails.rules); more are named in
``guardrails.providers`` as ``module:Class`` and built with no arguments.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import re
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from pronghorn.config.schema.governance import GuardrailRulesConfig, GuardrailsConfig

PATH_ARGS = ("path", "file_path", "pattern", "directory")
SHELL_TOOLS = frozenset({"bash"})
FETCH_TOOLS = frozenset({"web_fetch"})


class GuardrailLoadError(ValueError):
    """A guardrails.providers entry that cannot be imported or built."""


@dataclass(frozen=True, slots=True)
class Verdict:
    provider: str
    reason: str


def _host_allowed(host: str, allowed: Sequence[str]) -> bool:
    host = host.lower().rstrip(".")
    for entry in allowed:
        domain = entry.lower().strip().lstrip("*").lstrip(".").rstrip(".")
        if host == domain or host.endswith("." + domain):
            return True
    return False


class RuleGuardrail:
    """Deny patterns on shell commands and paths; allow-listed domains for web_fetch."""

    def __init__(self, rules: GuardrailRulesConfig) -> None:
        self.rules = rules
        self._commands = [re.compile(p) for p in rules.deny_commands]
        self._answers = [re.compile(p) for p in rules.deny_answer_patterns]

    def _path_denied(self, path: str) -> str | None:
        for pattern in self.rules.deny_paths:
            if fnmatch.fnmatchcase(path, pattern):
                return pattern
        return None

    # A tool call's arguments: whatever JSON the model produced.
    def check_tool_call(self, tool: str, args: Mapping[str, object]) -> str | None:
        if tool in SHELL_TOOLS:
            command = str(args.get("command") or "")
            for rx in self._commands:
                if rx.search(command):
                    return f"the command matches the denied pattern {rx.pattern!r}"
            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            for word in words:
                if (hit := self._path_denied(word)) is not None:
                    return f"the command names a denied path ({hit!r})"
        for key in PATH_ARGS:
            value = args.get(key)
            if isinstance(value, str) and (hit := self._path_denied(value)) is not None:
                return f"the path {value!r} is denied ({hit!r})"
        if tool in FETCH_TOOLS and self.rules.allow_domains is not None:
            url = str(args.get("url") or "")
            host = urlsplit(url).hostname or ""
            if not _host_allowed(host, self.rules.allow_domains):
                return f"the domain {host or url!r} is not on the allow-list"
        return None

    def check_answer(self, text: str) -> str | None:
        for rx in self._answers:
            if rx.search(text):
                return f"the answer matches the denied pattern {rx.pattern!r}"
        return None


def _load(spec: str) -> object:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        factory: Callable[[], object] = getattr(module, attr)
        return factory()
    except Exception as exc:
        raise GuardrailLoadError(f"guardrail provider {spec!r}: {exc}") from exc


def build_guardrails(config: GuardrailsConfig) -> list[tuple[str, object]]:
    """(name, provider) for the rules (when any is set) and each configured provider."""
    out: list[tuple[str, object]] = []
    rules = config.rules
    if (
        rules.deny_commands
        or rules.deny_paths
        or rules.allow_domains is not None
        or (rules.deny_answer_patterns)
    ):
        out.append(("rules", RuleGuardrail(rules)))
    out.extend((spec, _load(spec)) for spec in config.providers)
    return out


async def _call(method: Callable[..., object], *args: object) -> str | None:
    result = method(*args)
    if inspect.isawaitable(result):
        result = await cast("Awaitable[object]", result)
    return str(result) if result else None


# A tool call's arguments: whatever JSON the model produced.
async def check_tool_call(
    providers: Sequence[tuple[str, object]], tool: str, args: Mapping[str, object]
) -> Verdict | None:
    for name, provider in providers:
        method = getattr(provider, "check_tool_call", None)
        if method is not None and (reason := await _call(method, tool, dict(args))):
            return Verdict(name, reason)
    return None


async def check_answer(providers: Sequence[tuple[str, object]], text: str) -> Verdict | None:
    for name, provider in providers:
        method = getattr(provider, "check_answer", None)
        if method is not None and (reason := await _call(method, text)):
            return Verdict(name, reason)
    return None
