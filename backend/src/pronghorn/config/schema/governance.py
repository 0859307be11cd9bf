"""Config sections of governance: budgets, tool approvals, guardrails, follow-up
suggestions (docs/governance.md). All hot-reloadable: a run applies the snapshot it
started with."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelPricing(_Section):
    """What one model costs, in US dollars per million tokens."""

    input_per_million: float = Field(default=0.0, ge=0, description="USD per 1M input tokens.")
    output_per_million: float = Field(default=0.0, ge=0, description="USD per 1M output tokens.")


class BudgetLimit(_Section):
    """A cap on tokens and/or cost; null: no cap of that kind."""

    tokens: int | None = Field(default=None, ge=1, description="Most tokens (input + output).")
    cost_usd: float | None = Field(
        default=None, gt=0, description="Most spend in USD (from models[].pricing)."
    )


class BudgetsConfig(_Section):
    """Token and cost limits, checked before every model call of the lead agent: a call
    that would go over one is not made and the run ends with `budget_exceeded`."""

    per_run: BudgetLimit = Field(default_factory=BudgetLimit, description="Limits of one run.")
    per_user_daily: BudgetLimit = Field(
        default_factory=BudgetLimit, description="Limits of one user per UTC day."
    )
    per_user_monthly: BudgetLimit = Field(
        default_factory=BudgetLimit, description="Limits of one user per UTC calendar month."
    )


class ApprovalsConfig(_Section):
    """Tools that need a human OK before each call (the run interrupts with a
    `tool_approval` request)."""

    tools: list[str] = Field(
        default_factory=list,
        description=(
            "Tool names, shell-style patterns ('mcp_*') or groups (@shell, @write, @web, "
            "@mcp, @all). An assistant (or run) can add more in its context key 'approvals'."
        ),
    )
    timeout_s: float = Field(
        default=3600.0,
        gt=0,
        description="An approval unanswered this long is denied (the run resumes with a denial).",
    )
    sweep_interval_s: float = Field(
        default=5.0, gt=0, description="How often unanswered approvals are checked for timeout."
    )


class GuardrailRulesConfig(_Section):
    """The built-in rule provider."""

    deny_commands: list[str] = Field(
        default_factory=list,
        description="Regular expressions: a bash command matching one is blocked.",
    )
    deny_paths: list[str] = Field(
        default_factory=list,
        description=(
            "Shell-style patterns of paths ('/mnt/user-data/workspace/.env*'): file tools on "
            "a matching path are blocked, and so is a command that names one."
        ),
    )
    allow_domains: list[str] | None = Field(
        default=None,
        description=(
            "Domains web_fetch may reach ('example.com' includes its subdomains); null: any."
        ),
    )
    deny_answer_patterns: list[str] = Field(
        default_factory=list,
        description="Regular expressions: a final answer matching one is withheld.",
    )

    @field_validator("deny_commands", "deny_answer_patterns")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        return patterns


class GuardrailsConfig(_Section):
    """Checks on every tool call and final answer of the lead agent."""

    rules: GuardrailRulesConfig = Field(default_factory=GuardrailRulesConfig)
    providers: list[str] = Field(
        default_factory=list,
        description=(
            "More guardrails, 'package.module:Class' (built with no arguments); see "
            "docs/governance.md for the hook methods."
        ),
    )

    @field_validator("providers")
    @classmethod
    def _specs(cls, specs: list[str]) -> list[str]:
        for spec in specs:
            if ":" not in spec:
                raise ValueError(f"guardrail provider {spec!r} must look like 'module:Class'")
        return specs


class SuggestionsConfig(_Section):
    """Follow-up suggestions (POST /api/threads/{id}/suggestions)."""

    enabled: bool = Field(default=True, description="Offer follow-up suggestions.")
    max_suggestions: int = Field(default=3, ge=1, le=10, description="Most suggestions.")
    model: str | None = Field(
        default=None, description="Model that writes them; default: the default model."
    )
