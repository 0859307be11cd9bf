"""Per-run options of the lead agent.

A run picks them in its ``context`` (LangGraph 0.6+ run context) or, for older clients, in
``config["configurable"]``; ``context`` wins. The graph is compiled once per option tuple
(see ``pronghorn.graphs.lead_agent``), so the options must be hashable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
_EFFORTS = {"minimal", "low", "medium", "high"}


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


@dataclass(frozen=True)
class AgentOptions:
    """What a run may choose about the lead agent."""

    model_name: str | None = None
    thinking_enabled: bool = False
    reasoning_effort: str | None = None
    is_plan_mode: bool = False
    agent_name: str | None = None  # a custom agent (its own memory scope)

    @classmethod
    def from_run(
        cls, config: Mapping[str, Any] | None = None, context: Mapping[str, Any] | None = None
    ) -> AgentOptions:
        """Read the options from a run's ``context`` first, then ``configurable``."""
        configurable = dict((config or {}).get("configurable") or {})
        ctx = dict(context or {})

        def pick(key: str) -> Any:
            if ctx.get(key) is not None:
                return ctx[key]
            return configurable.get(key)

        model_name = pick("model_name")
        effort = pick("reasoning_effort")
        effort = str(effort).strip().lower() if effort else None
        return cls(
            model_name=str(model_name) if model_name else None,
            thinking_enabled=_as_bool(pick("thinking_enabled")),
            reasoning_effort=effort if effort in _EFFORTS else None,
            is_plan_mode=_as_bool(pick("is_plan_mode")),
            agent_name=str(pick("agent_name")) if pick("agent_name") else None,
        )

    def key(self) -> tuple[Any, ...]:
        """A hashable key for graph caches."""
        return (
            self.model_name,
            self.thinking_enabled,
            self.reasoning_effort,
            self.is_plan_mode,
            self.agent_name,
        )
