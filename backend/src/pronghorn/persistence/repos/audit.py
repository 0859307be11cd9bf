"""The audit log: an append-only record of security-relevant events, newest first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from pronghorn.persistence.repos.common import as_utc, iso
from pronghorn.persistence.tables import audit_log


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    at: datetime
    actor: str | None
    action: str
    target: str | None
    client_ip: str | None
    detail: Mapping[str, object]

    def to_api(self) -> dict[str, object]:
        return {
            "id": self.id,
            "at": iso(self.at),
            "actor": self.actor,
            "action": self.action,
            "target": self.target,
            "client_ip": self.client_ip,
            "detail": dict(self.detail),
        }


def append(
    conn: Connection,
    *,
    at: datetime,
    action: str,
    actor: str | None,
    target: str | None,
    client_ip: str | None,
    detail: Mapping[str, object],
) -> None:
    conn.execute(
        insert(audit_log).values(
            at=at,
            action=action,
            actor=actor,
            target=target,
            client_ip=client_ip,
            detail=dict(detail),
        )
    )


def page(conn: Connection, *, limit: int, before: int | None = None) -> list[AuditEntry]:
    query = select(audit_log).order_by(audit_log.c.id.desc()).limit(limit)
    if before is not None:
        query = query.where(audit_log.c.id < before)
    entries: list[AuditEntry] = []
    for row in (conn.execute(query)).mappings():
        at = as_utc(row["at"])
        assert at is not None
        entries.append(
            AuditEntry(
                id=int(row["id"]),
                at=at,
                actor=row["actor"],
                action=row["action"],
                target=row["target"],
                client_ip=row["client_ip"],
                detail=row["detail"] or {},
            )
        )
    return entries
