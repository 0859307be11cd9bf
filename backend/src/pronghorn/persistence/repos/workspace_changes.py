"""The files each run changed in its thread's folders (one row per run that changed any)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import workspace_changes


def insert_changes(
    conn: Connection, *, run_id: str, thread_id: str, changes: dict[str, Any]
) -> None:
    conn.execute(
        insert(workspace_changes).values(
            run_id=run_id, thread_id=thread_id, changes=changes, created_at=now()
        )
    )


def get_changes(conn: Connection, thread_id: str, run_id: str) -> dict[str, Any] | None:
    query = select(workspace_changes.c.changes).where(
        workspace_changes.c.run_id == run_id, workspace_changes.c.thread_id == thread_id
    )
    return (conn.execute(query)).scalar_one_or_none()
