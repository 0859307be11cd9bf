"""Budget policy: which limit a model call would go over, decided before it is made.

The cost of a call is only known after it, so the check asks whether the usage so far plus
an estimate of the call's input (characters / 4) reaches a limit; an exhausted budget is
therefore always refused, and a call whose prompt alone is over what is left too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pronghorn.config.schema.governance import BudgetLimit, BudgetsConfig, ModelPricing
from pronghorn.governance.ports import Spend, SpendWindows

REASON = "budget_exceeded"


class BudgetExceededError(RuntimeError):
    """A model call refused by a budget. ``run_error_code`` is what the run's error names
    (the executor reads it)."""

    run_error_code = REASON

    def __init__(self, message: str, *, scope: str, kind: str, limit: float, used: float) -> None:
        super().__init__(message)
        self.scope = scope
        self.kind = kind
        self.limit = limit
        self.used = used


@dataclass(frozen=True, slots=True)
class Refusal:
    scope: str  # "run", "daily", "monthly"
    kind: str  # "tokens", "cost"
    limit: float
    used: float
    estimate: float = 0  # what the refused call was estimated to add

    def message(self) -> str:
        what = {"run": "this run's", "daily": "your daily", "monthly": "your monthly"}[self.scope]
        if self.kind == "tokens":
            amount = f"{int(self.used)} of {int(self.limit)} tokens used"
            call = f"about {int(self.estimate)} tokens"
        else:
            amount = f"${self.used:.4f} of ${self.limit:.4f} used"
            call = f"about ${self.estimate:.4f}"
        if self.used >= self.limit:
            state = f"{what} {self.kind} budget is used up ({amount})"
        else:
            state = (
                f"the next model call ({call}) would exceed {what} {self.kind} budget ({amount})"
            )
        return f"Budget exceeded: {state}, so the model was not called."

    def error(self) -> BudgetExceededError:
        return BudgetExceededError(
            self.message(), scope=self.scope, kind=self.kind, limit=self.limit, used=self.used
        )


def cost_of(pricing: ModelPricing | None, input_tokens: int, output_tokens: int) -> float:
    if pricing is None:
        return 0.0
    return (
        input_tokens * pricing.input_per_million + output_tokens * pricing.output_per_million
    ) / 1_000_000


def estimate_tokens(texts: Iterable[str]) -> int:
    """A rough token count (4 characters a token), enough to refuse a prompt that alone
    would go over what is left."""
    return sum(len(t) for t in texts) // 4


def windows(budgets: BudgetsConfig) -> list[tuple[str, BudgetLimit]]:
    return [
        ("run", budgets.per_run),
        ("daily", budgets.per_user_daily),
        ("monthly", budgets.per_user_monthly),
    ]


def is_limited(budgets: BudgetsConfig) -> bool:
    return any(lim.tokens is not None or lim.cost_usd is not None for _, lim in windows(budgets))


def check(
    budgets: BudgetsConfig,
    spent: SpendWindows,
    *,
    estimate_tokens: int = 0,
    estimate_cost: float = 0.0,
) -> Refusal | None:
    """The first limit that the usage so far plus the estimate would reach or pass."""
    used = {"run": spent.run, "daily": spent.day, "monthly": spent.month}
    for scope, limit in windows(budgets):
        have: Spend = used[scope]
        if limit.tokens is not None and have.tokens + max(estimate_tokens, 1) > limit.tokens:
            return Refusal(scope, "tokens", limit.tokens, have.tokens, estimate_tokens)
        if limit.cost_usd is not None and have.cost_usd + estimate_cost >= limit.cost_usd:
            return Refusal(scope, "cost", limit.cost_usd, have.cost_usd, estimate_cost)
    return None


def remaining(budgets: BudgetsConfig, spent: SpendWindows) -> dict[str, dict[str, float | None]]:
    """Per window: the limits, the usage and what is left (None: no limit)."""
    used = {"run": spent.run, "daily": spent.day, "monthly": spent.month}
    out: dict[str, dict[str, float | None]] = {}
    for scope, limit in windows(budgets):
        have = used[scope]
        out[scope] = {
            "tokens_limit": limit.tokens,
            "tokens_used": have.tokens,
            "tokens_remaining": None
            if limit.tokens is None
            else max(limit.tokens - have.tokens, 0),
            "cost_limit_usd": limit.cost_usd,
            "cost_used_usd": round(have.cost_usd, 6),
            "cost_remaining_usd": None
            if limit.cost_usd is None
            else round(max(limit.cost_usd - have.cost_usd, 0.0), 6),
        }
    return out
