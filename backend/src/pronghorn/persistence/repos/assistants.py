"""Assistants and their versions."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from sqlalchemy import ColumnElement, and_, delete, func, insert, or_, select, text, update
from sqlalchemy.engine import Connection, RowMapping

from pronghorn.ids import system_assistant_id
from pronghorn.persistence.metadata_filter import matches, sql_condition
from pronghorn.persistence.migrate import SCHEMA_LOCK_KEY
from pronghorn.persistence.records.assistants import AssistantRecord, assistant_record
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.repos.common import (
    ANY_OWNER,
    OwnerScope,
    contains,
    json_filter,
    now,
)
from pronghorn.persistence.tables import assistant_versions, assistants


def get(conn: Connection, assistant_id: str) -> AssistantRecord | None:
    row = (
        (conn.execute(select(assistants).where(assistants.c.assistant_id == assistant_id)))
        .mappings()
        .first()
    )
    return assistant_record(row) if row else None


def insert_assistant(
    conn: Connection,
    *,
    assistant_id: str,
    graph_id: str,
    config: Mapping[str, object],
    context: Mapping[str, object],
    metadata: Mapping[str, object],
    name: str,
    description: str | None,
    owner_id: str | None = None,
) -> AssistantRecord:
    """A new assistant (`owner_id` None: a system assistant, shared read-only)."""
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
    conn.execute(insert(assistants).values(owner_id=owner_id, **values))
    conn.execute(
        insert(assistant_versions).values(**{k: v for k, v in values.items() if k != "updated_at"})
    )
    return assistant_record({**values, "owner_id": owner_id})


def ensure_system_assistants(conn: Connection, graph_ids: list[str]) -> None:
    """One assistant per graph (deterministic UUIDv5 id, metadata.created_by=system)."""
    if conn.dialect.name != "sqlite":  # replicas starting together: one inserts, the others see it
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK_KEY})
    existing = set(
        (
            conn.execute(
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
        insert_assistant(
            conn,
            assistant_id=aid,
            graph_id=graph_id,
            config={},
            context={},
            metadata={"created_by": "system"},
            name=graph_id,
            description=None,
        )


def remove_system_assistants(conn: Connection, graph_ids: list[str]) -> None:
    """Delete the system assistants of graphs no longer configured (their versions go with
    them; threads and runs do not reference assistants, so their history stays)."""
    if not graph_ids:
        return
    ids = (
        conn.execute(
            select(assistants.c.assistant_id).where(
                assistants.c.assistant_id.in_([system_assistant_id(g) for g in graph_ids]),
                assistants.c.owner_id.is_(None),
            )
        )
    ).scalars()
    for assistant_id in list(ids):
        delete_assistant(conn, assistant_id)


def prune_system_assistants(conn: Connection, graph_ids: list[str]) -> list[str]:
    """Delete the system assistants of graphs not in ``graph_ids`` (graphs removed from the
    config while the server was down); returns their graph ids. An assistant is a system
    one when it has no owner and the id derived from its graph."""
    rows = (
        conn.execute(
            select(assistants.c.assistant_id, assistants.c.graph_id).where(
                assistants.c.owner_id.is_(None), assistants.c.graph_id.not_in(graph_ids)
            )
        )
    ).all()
    stale = [(a, g) for a, g in rows if a == system_assistant_id(g)]
    for assistant_id, _graph_id in stale:
        delete_assistant(conn, assistant_id)
    return sorted(g for _a, g in stale)


# --- lookups, search, versions ----------------------------------------------------------------

ASSISTANT_SORT_FIELDS = ("assistant_id", "graph_id", "name", "created_at", "updated_at")


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        return False
    return True


def get_row(conn: Connection, assistant_id: str) -> RowMapping | None:
    stmt = select(assistants).where(assistants.c.assistant_id == assistant_id)
    return (conn.execute(stmt)).mappings().first()


def usable(row: RowMapping | None, owner_scope: str | None) -> bool:
    """Whether the assistant row is there for `owner_scope` (None: any owner): a system
    assistant (no owner) is everyone's."""
    return row is not None and (
        owner_scope is None or row["owner_id"] is None or row["owner_id"] == owner_scope
    )


def resolve_row(
    conn: Connection, id_or_graph_id: str, *, owner_scope: str | None = None
) -> RowMapping | None:
    """The row of the assistant with this id, or — for a graph id — of that graph's system
    assistant; with `owner_scope`, only a system assistant or one of that owner."""
    if _is_uuid(id_or_graph_id):
        row = get_row(conn, str(uuid.UUID(id_or_graph_id)))
        if usable(row, owner_scope):
            return row
    row = get_row(conn, system_assistant_id(id_or_graph_id))
    return row if usable(row, owner_scope) else None


def resolve_assistant(
    conn: Connection, id_or_graph_id: str, *, owner_scope: str | None = None
) -> AssistantRecord | None:
    """The assistant with this id, or — for a graph id — that graph's system assistant
    (see `resolve_row`)."""
    row = resolve_row(conn, id_or_graph_id, owner_scope=owner_scope)
    return assistant_record(row) if row is not None else None


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _conditions(
    metadata: Mapping[str, object] | None,
    graph_id: str | None,
    name: str | None,
    scope: OwnerScope,
    dialect: str,
) -> tuple[list[ColumnElement[bool]], dict[str, object], dict[str, object]]:
    cond, rest = json_filter(assistants, "metadata", metadata)
    auth_cond, auth_rest = sql_condition(assistants.c.metadata, scope.filter, dialect)
    conds: list[ColumnElement[bool]] = [cond, auth_cond]
    if scope.owner_id is not None:  # the owner's own and the shared system assistants
        conds.append(or_(assistants.c.owner_id.is_(None), assistants.c.owner_id == scope.owner_id))
    if graph_id:
        conds.append(assistants.c.graph_id == graph_id)
    if name:
        conds.append(assistants.c.name.ilike(f"%{_like_escape(name)}%", escape="\\"))
    return conds, rest, auth_rest


def search(
    conn: Connection,
    *,
    metadata: Mapping[str, object] | None = None,
    graph_id: str | None = None,
    name: str | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: str | None = None,
    sort_order: str | None = None,
    scope: OwnerScope = ANY_OWNER,
) -> tuple[list[AssistantRecord], int]:
    """One page of assistants and the total number matching, within `scope`."""
    conds, rest, auth_rest = _conditions(metadata, graph_id, name, scope, conn.dialect.name)
    column = assistants.c[sort_by if sort_by in ASSISTANT_SORT_FIELDS else "created_at"]
    order = column.asc() if (sort_order or "desc").lower() == "asc" else column.desc()
    query = select(assistants).where(and_(*conds)).order_by(order, assistants.c.assistant_id)
    if rest or auth_rest:
        rows = [
            r
            for r in (conn.execute(query)).mappings()
            if contains(r["metadata"], rest) and matches(r["metadata"], auth_rest)
        ]
        return [assistant_record(r) for r in rows[offset : offset + limit]], len(rows)
    total = (
        conn.execute(select(func.count()).select_from(assistants).where(and_(*conds)))
    ).scalar_one()
    rows = (conn.execute(query.limit(limit).offset(offset))).mappings().all()
    return [assistant_record(r) for r in rows], int(total)


def count(
    conn: Connection,
    *,
    metadata: Mapping[str, object] | None = None,
    graph_id: str | None = None,
    name: str | None = None,
    scope: OwnerScope = ANY_OWNER,
) -> int:
    _, total = search(conn, metadata=metadata, graph_id=graph_id, name=name, limit=0, scope=scope)
    return total


def update_assistant(
    conn: Connection,
    assistant_id: str,
    *,
    graph_id: str | None = None,
    config: Mapping[str, object] | None = None,
    context: Mapping[str, object] | None = None,
    metadata: Mapping[str, object] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> AssistantRecord | None:
    """PATCH: a new version with the given fields (omitted ones kept, metadata merged)."""
    row = (
        (conn.execute(select(assistants).where(assistants.c.assistant_id == assistant_id)))
        .mappings()
        .first()
    )
    if row is None:
        return None
    latest = (
        conn.execute(
            select(func.max(assistant_versions.c.version)).where(
                assistant_versions.c.assistant_id == assistant_id
            )
        )
    ).scalar_one()
    ts = now()
    fields: dict[str, object] = {
        "graph_id": graph_id if graph_id is not None else row["graph_id"],
        "config": config if config is not None else row["config"],
        "context": context if context is not None else row["context"],
        "metadata": {**(json_object(row["metadata"]) or {}), **(metadata or {})},
        "name": name if name is not None else row["name"],
        "description": description if description is not None else row["description"],
        "version": int(latest or row["version"]) + 1,
    }
    conn.execute(
        insert(assistant_versions).values(assistant_id=assistant_id, created_at=ts, **fields)
    )
    conn.execute(
        update(assistants)
        .where(assistants.c.assistant_id == assistant_id)
        .values(updated_at=ts, **fields)
    )
    return get(conn, assistant_id)


def delete_assistant(conn: Connection, assistant_id: str) -> bool:
    conn.execute(
        delete(assistant_versions).where(assistant_versions.c.assistant_id == assistant_id)
    )
    result = conn.execute(delete(assistants).where(assistants.c.assistant_id == assistant_id))
    return bool(result.rowcount)


def list_versions(
    conn: Connection,
    assistant_id: str,
    *,
    metadata: Mapping[str, object] | None = None,
    limit: int = 10,
    offset: int = 0,
) -> list[AssistantRecord]:
    """Versions of one assistant, newest first."""
    cond, rest = json_filter(assistant_versions, "metadata", metadata)
    rows = (
        (
            conn.execute(
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
    return [assistant_record(r) for r in rows[offset : offset + limit]]


def set_latest(conn: Connection, assistant_id: str, version: int) -> AssistantRecord | None:
    """Make an existing version current; None when the assistant or version is unknown."""
    row = (
        (
            conn.execute(
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
    conn.execute(
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
    return get(conn, assistant_id)
