"""Assistants and their versions."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from pronghorn.ids import system_assistant_id
from pronghorn.persistence.db import Database
from pronghorn.persistence.repos.common import contains, iso, json_filter, now
from pronghorn.persistence.tables import assistant_versions, assistants


def to_api(row: Any) -> dict[str, Any]:
    return {**version_to_api(row), "updated_at": iso(row["updated_at"])}


def version_to_api(row: Any) -> dict[str, Any]:
    """An assistant version (the `assistant_versions` row has no updated_at)."""
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


# --- lookups, search, versions ----------------------------------------------------------------

ASSISTANT_SORT_FIELDS = ("assistant_id", "graph_id", "name", "created_at", "updated_at")


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        return False
    return True


async def resolve_assistant(conn: AsyncConnection, id_or_graph_id: str) -> dict[str, Any] | None:
    """The assistant with this id, or — for a graph id — that graph's system assistant."""
    if _is_uuid(id_or_graph_id):
        found = await get(conn, str(uuid.UUID(id_or_graph_id)))
        if found is not None:
            return found
    return await get(conn, system_assistant_id(id_or_graph_id))


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _conditions(
    metadata: dict[str, Any] | None, graph_id: str | None, name: str | None
) -> tuple[list[ColumnElement[bool]], dict[str, Any]]:
    cond, rest = json_filter(assistants, "metadata", metadata)
    conds: list[ColumnElement[bool]] = [cond]
    if graph_id:
        conds.append(assistants.c.graph_id == graph_id)
    if name:
        conds.append(assistants.c.name.ilike(f"%{_like_escape(name)}%", escape="\\"))
    return conds, rest


async def search(
    conn: AsyncConnection,
    *,
    metadata: dict[str, Any] | None = None,
    graph_id: str | None = None,
    name: str | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: str | None = None,
    sort_order: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """One page of assistants and the total number matching."""
    conds, rest = _conditions(metadata, graph_id, name)
    column = assistants.c[sort_by if sort_by in ASSISTANT_SORT_FIELDS else "created_at"]
    order = column.asc() if (sort_order or "desc").lower() == "asc" else column.desc()
    query = select(assistants).where(and_(*conds)).order_by(order, assistants.c.assistant_id)
    if rest:
        rows = [r for r in (await conn.execute(query)).mappings() if contains(r["metadata"], rest)]
        return [to_api(r) for r in rows[offset : offset + limit]], len(rows)
    total = (
        await conn.execute(select(func.count()).select_from(assistants).where(and_(*conds)))
    ).scalar_one()
    rows = (await conn.execute(query.limit(limit).offset(offset))).mappings().all()
    return [to_api(r) for r in rows], int(total)


async def count(
    conn: AsyncConnection,
    *,
    metadata: dict[str, Any] | None = None,
    graph_id: str | None = None,
    name: str | None = None,
) -> int:
    _, total = await search(conn, metadata=metadata, graph_id=graph_id, name=name, limit=0)
    return total


async def update_assistant(
    conn: AsyncConnection,
    assistant_id: str,
    *,
    graph_id: str | None = None,
    config: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> dict[str, Any] | None:
    """PATCH: a new version with the given fields (omitted ones kept, metadata merged)."""
    row = (
        (await conn.execute(select(assistants).where(assistants.c.assistant_id == assistant_id)))
        .mappings()
        .first()
    )
    if row is None:
        return None
    latest = (
        await conn.execute(
            select(func.max(assistant_versions.c.version)).where(
                assistant_versions.c.assistant_id == assistant_id
            )
        )
    ).scalar_one()
    ts = now()
    fields: dict[str, Any] = {
        "graph_id": graph_id if graph_id is not None else row["graph_id"],
        "config": config if config is not None else row["config"],
        "context": context if context is not None else row["context"],
        "metadata": {**(row["metadata"] or {}), **(metadata or {})},
        "name": name if name is not None else row["name"],
        "description": description if description is not None else row["description"],
        "version": int(latest or row["version"]) + 1,
    }
    await conn.execute(
        insert(assistant_versions).values(assistant_id=assistant_id, created_at=ts, **fields)
    )
    await conn.execute(
        update(assistants)
        .where(assistants.c.assistant_id == assistant_id)
        .values(updated_at=ts, **fields)
    )
    return await get(conn, assistant_id)


async def delete_assistant(conn: AsyncConnection, assistant_id: str) -> bool:
    await conn.execute(
        delete(assistant_versions).where(assistant_versions.c.assistant_id == assistant_id)
    )
    result = await conn.execute(delete(assistants).where(assistants.c.assistant_id == assistant_id))
    return bool(result.rowcount)


async def list_versions(
    conn: AsyncConnection,
    assistant_id: str,
    *,
    metadata: dict[str, Any] | None = None,
    limit: int = 10,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Versions of one assistant, newest first."""
    cond, rest = json_filter(assistant_versions, "metadata", metadata)
    rows = (
        (
            await conn.execute(
                select(assistant_versions)
                .where(assistant_versions.c.assistant_id == assistant_id, cond)
                .order_by(assistant_versions.c.version.desc())
            )
        )
        .mappings()
        .all()
    )
    if rest:
        rows = [r for r in rows if contains(r["metadata"], rest)]
    return [version_to_api(r) for r in rows[offset : offset + limit]]


async def set_latest(
    conn: AsyncConnection, assistant_id: str, version: int
) -> dict[str, Any] | None:
    """Make an existing version current; None when the assistant or version is unknown."""
    row = (
        (
            await conn.execute(
                select(assistant_versions).where(
                    assistant_versions.c.assistant_id == assistant_id,
                    assistant_versions.c.version == version,
                )
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    await conn.execute(
        update(assistants)
        .where(assistants.c.assistant_id == assistant_id)
        .values(
            graph_id=row["graph_id"],
            config=row["config"],
            context=row["context"],
            metadata=row["metadata"],
            name=row["name"],
            description=row["description"],
            version=row["version"],
            updated_at=now(),
        )
    )
    return await get(conn, assistant_id)
