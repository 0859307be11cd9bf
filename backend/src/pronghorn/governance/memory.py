"""In-memory ``GovernancePorts``: for an agent built without the app (tests, scripts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pronghorn.governance.ports import CallUsage, Spend, SpendWindows


@dataclass
class MemoryPorts:
    calls: list[CallUsage] = field(default_factory=list[CallUsage])
    audits: list[tuple[str, str | None, str | None, dict[str, object]]] = field(
        default_factory=list[tuple[str, str | None, str | None, dict[str, object]]]
    )

    async def spend(self, run_id: str, owner_id: str) -> SpendWindows:
        run, user = Spend(), Spend()
        for c in self.calls:
            tokens = c.input_tokens + c.output_tokens
            if c.run_id == run_id:
                run = run.plus(tokens, c.cost_usd)
            if c.owner_id == owner_id:
                user = user.plus(tokens, c.cost_usd)
        return SpendWindows(run=run, day=user, month=user)

    async def record_call(self, usage: CallUsage) -> None:
        self.calls.append(usage)

    async def audit(
        self, action: str, *, actor: str | None, target: str | None, detail: Mapping[str, object]
    ) -> None:
        self.audits.append((action, actor, target, dict(detail)))
