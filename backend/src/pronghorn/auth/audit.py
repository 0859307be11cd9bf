"""Write and read the audit log (secrets never go in: callers pass ids and names only)."""

from __future__ import annotations

from collections.abc import Mapping

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import audit as repo
from pronghorn.persistence.repos.audit import AuditEntry
from pronghorn.persistence.repos.common import now

__all__ = ["AuditEntry", "page", "record"]


async def record(
    db: Database,
    action: str,
    *,
    actor: str | None = None,
    target: str | None = None,
    client_ip: str | None = None,
    detail: Mapping[str, object] | None = None,
) -> None:
    await db.write(
        lambda conn: repo.append(
            conn,
            at=now(),
            action=action,
            actor=actor,
            target=target,
            client_ip=client_ip,
            detail=detail or {},
        )
    )


async def page(db: Database, *, limit: int, before: int | None = None) -> list[AuditEntry]:
    return await db.read(lambda conn: repo.page(conn, limit=limit, before=before))
