"""Per-run options of the lead agent.

A run picks them in its ``context`` (LangGraph 0.6+ run context) or, for older clients, in
``config["configurable"]``; ``context`` wins. The graph is compiled once per option tuple
(see ``pronghorn.graphs.lead_agent``), so the options must be hashable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass
from typing import cast

from pronghorn.agent.untyped import as_mapping

_TRUE = {"1", "true", "yes", "on"}
_EFFORTS = {"minimal", "low", "medium", "high"}


def _as_names(value: object) -> tuple[str, ...] | None:
    """A list of names as a tuple (hashable); None stays None (= no restriction)."""
    if value is None:
        return None
    if isinstance(value, str):
        return _as_names([value])
    if not isinstance(value, (list, tuple)):
        return None
    items = list(cast("Sequence[object]", value))
    return tuple(dict.fromkeys(str(v).strip() for v in items if str(v).strip()))


def _as_text(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def _as_bool(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


@dataclass(frozen=True)
class AgentOptions:
    """What a run may choose about the lead agent."""

    model_name: str | None = None
    thinking_enabled: bool | None = None  # None: the run did not say (the model's default)
    reasoning_effort: str | None = None
    is_plan_mode: bool = False
    # A custom agent (an assistant of lead_agent whose context carries these; see docs/agent.md)
    agent_name: str | None = None
    description: str | None = None
    system_prompt: str | None = None  # the persona, appended to the lead agent's prompt
    tool_groups: tuple[str, ...] | None = None  # None: every group
    skills: tuple[str, ...] | None = None  # allow-list; None: every enabled skill
    mcp_servers: tuple[str, ...] | None = None  # allow-list; None: every enabled server
    subagent_enabled: bool = False

    @classmethod
    def from_run(
        cls,
        config: Mapping[str, object] | None = None,
        context: Mapping[str, object] | None = None,
    ) -> AgentOptions:
        """Read the options from a run's ``context`` first, then ``configurable`` (both the
        caller's JSON: each option is checked here)."""
        configurable = as_mapping((config or {}).get("configurable")) or {}
        ctx = context or {}

        def pick(key: str) -> object:
            if ctx.get(key) is not None:
                return ctx[key]
            return configurable.get(key)

        model_name = pick("model_name")
        effort = pick("reasoning_effort")
        effort = str(effort).strip().lower() if effort else None
        return cls(
            model_name=str(model_name) if model_name else None,
            thinking_enabled=(
                None if pick("thinking_enabled") is None else _as_bool(pick("thinking_enabled"))
            ),
            reasoning_effort=effort if effort in _EFFORTS else None,
            is_plan_mode=_as_bool(pick("is_plan_mode")),
            agent_name=_as_text(pick("agent_name")),
            description=_as_text(pick("description")),
            system_prompt=_as_text(pick("system_prompt")),
            tool_groups=_as_names(pick("tool_groups")),
            skills=_as_names(pick("skills")),
            mcp_servers=_as_names(pick("mcp_servers")),
            subagent_enabled=_as_bool(pick("subagent_enabled")),
        )

    def key(self) -> tuple[object, ...]:
        """A hashable key for graph caches."""
        return astuple(self)
