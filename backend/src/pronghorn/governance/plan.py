"""``GovernancePlan``: what the governance middlewares of one agent build apply (taken from
one config snapshot, so a run keeps the rules it started under)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.governance import (
    ApprovalsConfig,
    BudgetsConfig,
    GuardrailsConfig,
    ModelPricing,
)
from pronghorn.governance.guardrails import build_guardrails
from pronghorn.governance.ports import GovernancePorts


@dataclass(frozen=True)
class GovernancePlan:
    ports: GovernancePorts | None = None  # None: nothing recorded, no user-wide budgets
    budgets: BudgetsConfig = field(default_factory=BudgetsConfig)
    pricing: Mapping[str, ModelPricing] = field(default_factory=dict[str, ModelPricing])
    approvals: ApprovalsConfig = field(default_factory=ApprovalsConfig)
    guardrails: list[tuple[str, object]] = field(default_factory=list[tuple[str, object]])

    @classmethod
    def from_config(cls, config: AppConfig, ports: GovernancePorts | None) -> GovernancePlan:
        return cls(
            ports=ports,
            budgets=config.budgets,
            pricing={m.name: m.pricing for m in config.models if m.pricing is not None},
            approvals=config.approvals,
            guardrails=build_guardrails(config.guardrails),
        )

    @classmethod
    def of(cls, guardrails: GuardrailsConfig | None = None, **kw: object) -> GovernancePlan:
        """A plan from parts (tests)."""
        built = build_guardrails(guardrails) if guardrails is not None else []
        return cls(guardrails=built, **kw)  # type: ignore[arg-type]
