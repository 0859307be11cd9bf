"""The files each run changed in its thread's folders (one row per run that changed any)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.repos.common import now
from pronghorn.persistence.tables import workspace_changes


def insert_changes(
    conn: Connection, *, run_id: str, thread_id: str, changes: Mapping[str, object]
) -> None:
    conn.execute(
        insert(workspace_changes).values(
            run_id=run_id, thread_id=thread_id, changes=changes, created_at=now()
        )
    )


def get_changes(conn: Connection, thread_id: str, run_id: str) -> JsonObject | None:
    query = select(workspace_changes.c.changes).where(
        workspace_changes.c.run_id == run_id, workspace_changes.c.thread_id == thread_id
    )
    return json_object(conn.execute(query).scalar_one_or_none())
