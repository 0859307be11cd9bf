"""Assistants and their versions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from pronghorn.graphs.registry import system_assistant_id
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos.common import iso, now
from pronghorn.persistence.tables import assistant_versions, assistants


def to_api(row: Any) -> dict[str, Any]:
    return {
        "assistant_id": row["assistant_id"],
        "graph_id": row["graph_id"],
        "config": row["config"] or {},
        "context": row["context"] or {},
        "metadata": row["metadata"] or {},
        "name": row["name"],
        "description": row["description"],
        "version": row["version"],
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
    }


async def get(conn: AsyncConnection, assistant_id: str) -> dict[str, Any] | None:
    row = (
        (await conn.execute(select(assistants).where(assistants.c.assistant_id == assistant_id)))
        .mappings()
        .first()
    )
    return to_api(row) if row else None


async def insert_assistant(
    conn: AsyncConnection,
    *,
    assistant_id: str,
    graph_id: str,
    config: dict[str, Any],
    context: dict[str, Any],
    metadata: dict[str, Any],
    name: str,
    description: str | None,
) -> dict[str, Any]:
    ts = now()
    values = {
        "assistant_id": assistant_id,
        "graph_id": graph_id,
        "config": config,
        "context": context,
        "metadata": metadata,
        "name": name,
        "description": description,
        "version": 1,
        "created_at": ts,
        "updated_at": ts,
    }
    await conn.execute(insert(assistants).values(**values))
    await conn.execute(
        insert(assistant_versions).values(**{k: v for k, v in values.items() if k != "updated_at"})
    )
    return to_api(values)


async def ensure_system_assistants(db: Database, graph_ids: list[str]) -> None:
    """One assistant per graph (deterministic UUIDv5 id, metadata.created_by=system)."""
    async with db.tx() as conn:
        existing = set(
            (
                await conn.execute(
                    select(assistants.c.assistant_id).where(
                        assistants.c.assistant_id.in_([system_assistant_id(g) for g in graph_ids])
                    )
                )
            ).scalars()
        )
        for graph_id in graph_ids:
            aid = system_assistant_id(graph_id)
            if aid in existing:
                continue
            await insert_assistant(
                conn,
                assistant_id=aid,
                graph_id=graph_id,
                config={},
                context={},
                metadata={"created_by": "system"},
                name=graph_id,
                description=None,
            )
