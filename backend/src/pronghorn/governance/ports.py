"""What the governance middlewares need from the app, as a tiny contract.

The runtime implements it on SQL (runtime/services/governance.py); tests can pass an in-memory one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens and cost (USD) used in some window."""

    tokens: int = 0
    cost_usd: float = 0.0

    def plus(self, tokens: int, cost_usd: float) -> Spend:
        return Spend(self.tokens + tokens, self.cost_usd + cost_usd)


@dataclass(frozen=True, slots=True)
class SpendWindows:
    """What a run and its user have used so far."""

    run: Spend = Spend()
    day: Spend = Spend()
    month: Spend = Spend()


@dataclass(frozen=True, slots=True)
class CallUsage:
    """One model call, as recorded for budgets and the usage API."""

    run_id: str
    thread_id: str
    owner_id: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float


class GovernancePorts(Protocol):
    async def spend(self, run_id: str, owner_id: str) -> SpendWindows:
        """What the run, and its owner today and this month, have used."""
        ...

    async def record_call(self, usage: CallUsage) -> None:
        """Add one model call's usage."""
        ...

    async def audit(
        self, action: str, *, actor: str | None, target: str | None, detail: Mapping[str, object]
    ) -> None:
        """Write an audit record (no secrets: names and short previews only)."""
        ...
