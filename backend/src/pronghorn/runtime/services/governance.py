"""The governance ports on the database: the model usage ledger and audit records."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from pronghorn.auth import audit
from pronghorn.governance.ports import CallUsage, Spend, SpendWindows
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import model_usage
from pronghorn.persistence.repos.common import now


def window_starts(at: datetime) -> tuple[datetime, datetime]:
    """The start of `at`'s UTC day and UTC calendar month."""
    at = at.astimezone(UTC)
    day = at.replace(hour=0, minute=0, second=0, microsecond=0)
    return day, day.replace(day=1)


class SqlGovernance:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def spend(self, run_id: str, owner_id: str) -> SpendWindows:
        day, month = window_starts(now())
        got = await self.db.read(
            lambda conn: model_usage.spend(
                conn, run_id=run_id, owner_id=owner_id, day_start=day, month_start=month
            )
        )
        return SpendWindows(
            run=Spend(*got["run"]), day=Spend(*got["day"]), month=Spend(*got["month"])
        )

    async def record_call(self, usage: CallUsage) -> None:
        await self.db.write(
            lambda conn: model_usage.append(
                conn,
                at=now(),
                owner_id=usage.owner_id,
                thread_id=usage.thread_id,
                run_id=usage.run_id,
                model=usage.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost_usd=usage.cost_usd,
            )
        )

    async def audit(
        self, action: str, *, actor: str | None, target: str | None, detail: Mapping[str, object]
    ) -> None:
        await audit.record(self.db, action, actor=actor, target=target, detail=detail)
