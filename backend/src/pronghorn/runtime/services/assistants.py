"""Assistants as a service: create, find, change and delete them for a principal.

User-created assistants belong to their creator; system assistants (one per graph, owner
NULL) are shared by everyone and read-only for users. Another user's assistant is *not
found*; changing a system assistant as a user is *forbidden* (it is visible, so a 404
would lie). Admins may change system assistants, and reach other users' assistants only
with `Access.all_users`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.exc import IntegrityError

from pronghorn.auth.authorizer import Action
from pronghorn.persistence.errors import AssistantExists
from pronghorn.persistence.metadata_filter import matches
from pronghorn.persistence.records.assistants import AssistantRecord, assistant_record
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.repos import assistants as repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import OwnerScope, new_id
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.graph_access import require_graph
from pronghorn.runtime.errors import Forbidden, NotFound, refusals_mapped
from pronghorn.runtime.owned import authorize
from pronghorn.runtime.record_api import assistant_api, assistant_version_api
from pronghorn.runtime.services.thread_sweeper import purge_thread

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


def check_graph(runtime: AppRuntime, graph_id: str) -> None:
    require_graph(runtime.graphs, graph_id)


def _shown(access: Access, row: RowMapping) -> bool:
    return row["owner_id"] is None or access.may_see(row["owner_id"])


async def load_row(
    runtime: AppRuntime,
    access: Access,
    id_or_graph_id: str,
    action: Action = "read",
    value: dict[str, object] | None = None,
) -> RowMapping:
    """The assistant's row (an id, or a graph id for its system assistant) if `access` may
    `action` it: `NotFound` for an unknown or another user's, `Forbidden` for a change to a
    system assistant by a user (or a refusal by the authorizer)."""
    filt = await authorize(
        runtime, access, "assistants", action, value or {"assistant_id": id_or_graph_id}
    )
    row = await runtime.db.read(
        lambda conn: repo.resolve_row(conn, id_or_graph_id, owner_scope=access.owner_scope)
    )
    if row is None or not _shown(access, row) or not matches(row["metadata"], filt):
        raise NotFound.of("Assistant", id_or_graph_id)
    if action in ("update", "delete") and row["owner_id"] is None and not access.principal.is_admin:
        raise Forbidden(f"Assistant {row['assistant_id']} is a system assistant: read-only")
    return row


# Any: record_api's assistant JSON as it types it; the assistants router reads its fields
async def get(runtime: AppRuntime, access: Access, id_or_graph_id: str) -> dict[str, Any]:
    return assistant_api(assistant_record(await load_row(runtime, access, id_or_graph_id)))


async def create(
    runtime: AppRuntime,
    access: Access,
    *,
    graph_id: str,
    assistant_id: str | None,
    config: dict[str, object],
    context: dict[str, object],
    metadata: dict[str, object],
    if_exists: str,
    name: str,
    description: str | None,
) -> dict[str, object]:
    """A new assistant owned by `access`'s principal (`if_exists="do_nothing"` returns an
    existing one of its own instead of a conflict)."""
    return assistant_api(
        await create_row(
            runtime,
            access,
            graph_id=graph_id,
            assistant_id=assistant_id,
            config=config,
            context=context,
            metadata=metadata,
            if_exists=if_exists,
            name=name,
            description=description,
        )
    )


async def create_row(
    runtime: AppRuntime,
    access: Access,
    *,
    graph_id: str,
    assistant_id: str | None,
    config: dict[str, object],
    context: dict[str, object],
    metadata: dict[str, object],
    if_exists: str,
    name: str,
    description: str | None,
) -> AssistantRecord:
    """`create`'s assistant, as its record."""
    check_graph(runtime, graph_id)
    aid = assistant_id or new_id()
    value: dict[str, object] = {
        "assistant_id": aid,
        "graph_id": graph_id,
        "config": config,
        "context": context,
        "metadata": metadata,
        "if_exists": if_exists,
        "name": name,
        "description": description,
    }
    filt = await authorize(runtime, access, "assistants", "create", value)
    stamped = json_object(value.get("metadata"))
    if stamped is not None:  # the authorizer may stamp metadata
        metadata = dict(stamped)

    def unit(conn: Connection) -> AssistantRecord:
        existing = repo.get_row(conn, aid)
        if existing is not None:
            if (
                if_exists == "do_nothing"
                and _shown(access, existing)
                and matches(existing["metadata"], filt)
            ):
                return assistant_record(existing)
            raise AssistantExists(aid)
        try:
            new = repo.insert_assistant(
                conn,
                assistant_id=aid,
                graph_id=graph_id,
                config=config,
                context=context,
                metadata=metadata,
                name=name,
                description=description,
                owner_id=access.identity,
            )
        except IntegrityError:  # a concurrent create of the same id committed first
            raise AssistantExists(aid) from None
        return new

    with refusals_mapped():
        return await runtime.db.write(unit)


async def search_scope(runtime: AppRuntime, access: Access, value: dict[str, object]) -> OwnerScope:
    """Search and count see the principal's own and the system assistants (everyone's for
    an admin who asked), within the authorizer's metadata filter."""
    filt = await authorize(runtime, access, "assistants", "search", value)
    return OwnerScope(owner_id=access.owner_scope, filter=filt)


async def search(
    runtime: AppRuntime,
    access: Access,
    *,
    metadata: dict[str, object] | None,
    graph_id: str | None,
    name: str | None,
    limit: int,
    offset: int,
    sort_by: str | None,
    sort_order: str | None,
) -> tuple[list[dict[str, object]], int]:
    found, total = await search_rows(
        runtime,
        access,
        metadata=metadata,
        graph_id=graph_id,
        name=name,
        limit=limit,
        offset=offset,
        sort_by=sort_by,
        sort_order=sort_order,
    )
    return [assistant_api(a) for a in found], total


async def search_rows(
    runtime: AppRuntime,
    access: Access,
    *,
    metadata: dict[str, object] | None,
    graph_id: str | None,
    name: str | None,
    limit: int,
    offset: int,
    sort_by: str | None,
    sort_order: str | None,
) -> tuple[list[AssistantRecord], int]:
    """`search`'s page of assistants, as their records, and how many match."""
    value: dict[str, object] = {
        "metadata": metadata,
        "graph_id": graph_id,
        "name": name,
        "limit": limit,
        "offset": offset,
    }
    scope = await search_scope(runtime, access, value)
    return await runtime.db.read(
        lambda conn: repo.search(
            conn,
            metadata=metadata,
            graph_id=graph_id,
            name=name,
            limit=limit,
            offset=offset,
            sort_by=sort_by,
            sort_order=sort_order,
            scope=scope,
        )
    )


async def count(
    runtime: AppRuntime,
    access: Access,
    *,
    metadata: dict[str, object] | None,
    graph_id: str | None,
    name: str | None,
) -> int:
    value: dict[str, object] = {"metadata": metadata, "graph_id": graph_id, "name": name}
    scope = await search_scope(runtime, access, value)
    return await runtime.db.read(
        lambda conn: repo.count(conn, metadata=metadata, graph_id=graph_id, name=name, scope=scope)
    )


async def update(
    runtime: AppRuntime,
    access: Access,
    id_or_graph_id: str,
    *,
    graph_id: str | None,
    config: dict[str, object] | None,
    context: dict[str, object] | None,
    metadata: dict[str, object] | None,
    name: str | None,
    description: str | None,
) -> dict[str, object]:
    """A new version with the given fields (omitted ones kept, metadata merged)."""
    return assistant_api(
        await update_row(
            runtime,
            access,
            id_or_graph_id,
            graph_id=graph_id,
            config=config,
            context=context,
            metadata=metadata,
            name=name,
            description=description,
        )
    )


async def update_row(
    runtime: AppRuntime,
    access: Access,
    id_or_graph_id: str,
    *,
    graph_id: str | None,
    config: dict[str, object] | None,
    context: dict[str, object] | None,
    metadata: dict[str, object] | None,
    name: str | None,
    description: str | None,
) -> AssistantRecord:
    """`update`'s new version, as its record."""
    if graph_id is not None:
        check_graph(runtime, graph_id)
    value: dict[str, object] = {
        "assistant_id": id_or_graph_id,
        "graph_id": graph_id,
        "config": config,
        "context": context,
        "metadata": dict(metadata or {}),
        "name": name,
        "description": description,
    }
    row = await load_row(runtime, access, id_or_graph_id, "update", value)
    changed = json_object(value.get("metadata"))
    if metadata is not None and changed is not None:  # the authorizer may change it
        metadata = dict(changed)
    updated = await runtime.db.write(
        lambda conn: repo.update_assistant(
            conn,
            row["assistant_id"],
            graph_id=graph_id,
            config=config,
            context=context,
            metadata=metadata,
            name=name,
            description=description,
        )
    )
    if updated is None:
        raise NotFound.of("Assistant", id_or_graph_id)
    return updated


async def delete(
    runtime: AppRuntime, access: Access, id_or_graph_id: str, *, delete_threads: bool
) -> None:
    """Delete the assistant, stop its runs in flight and (if asked) delete its threads:
    the caller's own threads (everyone's for an admin who asked)."""
    row = await load_row(runtime, access, id_or_graph_id, "delete")
    aid = str(row["assistant_id"])

    def unit(conn: Connection) -> list[str]:
        repo.delete_assistant(conn, aid)
        if not delete_threads:
            return []
        rows, _ = threads_repo.search_rows(
            conn,
            metadata={"assistant_id": aid},
            limit=1_000_000,
            scope=OwnerScope(owner_id=access.owner_scope),
        )
        return [r.thread_id for r in rows]

    thread_ids = await runtime.db.write(unit)
    # No new run can be accepted for it now; stop the ones already in flight.
    await runtime.runs.cancel_assistant(aid)
    for thread_id in thread_ids:
        await purge_thread(runtime, thread_id)


async def versions(
    runtime: AppRuntime,
    access: Access,
    id_or_graph_id: str,
    *,
    metadata: dict[str, object] | None,
    limit: int,
    offset: int,
) -> list[dict[str, object]]:
    row = await load_row(runtime, access, id_or_graph_id)
    found = await runtime.db.read(
        lambda conn: repo.list_versions(
            conn, row["assistant_id"], metadata=metadata, limit=limit, offset=offset
        )
    )
    return [assistant_version_api(a) for a in found]


async def set_latest(
    runtime: AppRuntime, access: Access, id_or_graph_id: str, version: int
) -> dict[str, object]:
    row = await load_row(runtime, access, id_or_graph_id, "update")
    updated = await runtime.db.write(
        lambda conn: repo.set_latest(conn, row["assistant_id"], version)
    )
    if updated is None:
        raise NotFound(f"Assistant {id_or_graph_id} has no version {version}")
    return assistant_api(updated)
