"""Which tools a lead agent gets: the ``tools:`` config and a custom agent's tool groups.

Every tool belongs to one group: the built-ins to ``file``, ``shell``, ``web`` or
``interaction``; a tool added by import path to its configured group (``custom`` by
default); any other tool to the group in its ``metadata["group"]`` (MCP tools: ``mcp``),
else ``custom``. ``tools.enabled`` (an allow-list) and ``tools.disabled`` name tools or
groups; a custom agent's ``tool_groups`` narrows further.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Sequence
from typing import cast

from langchain_core.tools import BaseTool

from pronghorn.config.schema.extensions import ExtraTool, ToolsConfig

log = logging.getLogger("pronghorn.agent.tools")

BUILTIN_GROUPS: dict[str, str] = {
    "read_file": "file",
    "write_file": "file",
    "str_replace": "file",
    "ls": "file",
    "glob": "file",
    "grep": "file",
    "view_image": "file",
    "bash": "shell",
    "web_search": "web",
    "web_fetch": "web",
    "ask_clarification": "interaction",
    "present_files": "interaction",
    "write_todos": "interaction",
}


class ToolImportError(Exception):
    """A ``tools.extra`` entry that does not name LangChain tools."""


def group_of(tool: BaseTool) -> str:
    meta = tool.metadata or {}
    group = meta.get("group")
    if isinstance(group, str) and group:
        return group
    return BUILTIN_GROUPS.get(tool.name, "custom")


def _as_tools(value: object, use: str) -> list[BaseTool]:
    if isinstance(value, BaseTool):
        return [value]
    if isinstance(value, (list, tuple)):
        items = list(cast(Sequence[object], value))
        if all(isinstance(v, BaseTool) for v in items):
            return cast(list[BaseTool], items)
    raise ToolImportError(f"{use} is not a LangChain tool, a list of tools or a factory of them")


def load_extra(spec: ExtraTool) -> list[BaseTool]:
    """Import one ``tools.extra`` entry (blocking: imports run module code)."""
    module_name, _, attr = spec.use.partition(":")
    try:
        value: object = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ToolImportError(f"cannot import {spec.use}: {exc}") from None
    if callable(value) and not isinstance(value, BaseTool):  # a factory (lists never are)
        value = value()
    tools = [t.model_copy() for t in _as_tools(value, spec.use)]
    for t in tools:
        t.metadata = {**(t.metadata or {}), "group": spec.group, "source": spec.use}
    return tools


def extra_tools(config: ToolsConfig) -> tuple[list[BaseTool], list[str]]:
    """(tools, errors): an entry that fails to import is skipped and reported, never fatal."""
    tools: list[BaseTool] = []
    errors: list[str] = []
    for spec in config.extra:
        try:
            tools += load_extra(spec)
        except Exception as exc:  # any error in a user's module: skip it, keep the agent
            log.error("tools.extra %s skipped: %s", spec.use, exc)
            errors.append(f"{spec.use}: {exc}")
    return tools, errors


def _named(tool: BaseTool, names: Iterable[str]) -> bool:
    chosen = set(names)
    return tool.name in chosen or group_of(tool) in chosen


def select_tools(
    tools: Sequence[BaseTool], config: ToolsConfig, tool_groups: Sequence[str] | None = None
) -> list[BaseTool]:
    """The tools allowed by the config and the agent's groups (first of a name wins)."""
    out: list[BaseTool] = []
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            continue
        if config.enabled is not None and not _named(tool, config.enabled):
            continue
        if _named(tool, config.disabled):
            continue
        if tool_groups is not None and group_of(tool) not in tool_groups:
            continue
        seen.add(tool.name)
        out.append(tool)
    return out
