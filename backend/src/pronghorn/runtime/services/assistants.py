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
from pronghorn.persistence.metadata_filter import matches
from pronghorn.persistence.records.assistants import assistant_record
from pronghorn.persistence.repos import assistants as repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.persistence.repos.common import OwnerScope, new_id
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.graph_access import require_graph
from pronghorn.runtime.errors import Conflict, Forbidden, NotFound
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


async def get(runtime: AppRuntime, access: Access, id_or_graph_id: str) -> dict[str, Any]:
    return assistant_api(assistant_record(await load_row(runtime, access, id_or_graph_id)))


async def create(
    runtime: AppRuntime,
    access: Access,
    *,
    graph_id: str,
    assistant_id: str | None,
    config: dict[str, Any],
    context: dict[str, Any],
    metadata: dict[str, Any],
    if_exists: str,
    name: str,
    description: str | None,
) -> dict[str, Any]:
    """A new assistant owned by `access`'s principal (`if_exists="do_nothing"` returns an
    existing one of its own instead of a conflict)."""
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
    if isinstance(value.get("metadata"), dict):  # the authorizer may stamp metadata
        metadata = dict(value["metadata"])  # type: ignore[arg-type]

    def unit(conn: Connection) -> dict[str, Any]:
        existing = repo.get_row(conn, aid)
        if existing is not None:
            if (
                if_exists == "do_nothing"
                and _shown(access, existing)
                and matches(existing["metadata"], filt)
            ):
                return assistant_api(assistant_record(existing))
            raise Conflict(f"Assistant {aid} already exists")
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
            raise Conflict(f"Assistant {aid} already exists") from None
        return assistant_api(new)

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
    metadata: dict[str, Any] | None,
    graph_id: str | None,
    name: str | None,
    limit: int,
    offset: int,
    sort_by: str | None,
    sort_order: str | None,
) -> tuple[list[dict[str, Any]], int]:
    value: dict[str, object] = {
        "metadata": metadata,
        "graph_id": graph_id,
        "name": name,
        "limit": limit,
        "offset": offset,
    }
    scope = await search_scope(runtime, access, value)
    found, total = await runtime.db.read(
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
    return [assistant_api(a) for a in found], total


async def count(
    runtime: AppRuntime,
    access: Access,
    *,
    metadata: dict[str, Any] | None,
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
    config: dict[str, Any] | None,
    context: dict[str, Any] | None,
    metadata: dict[str, Any] | None,
    name: str | None,
    description: str | None,
) -> dict[str, Any]:
    """A new version with the given fields (omitted ones kept, metadata merged)."""
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
    if metadata is not None and isinstance(value.get("metadata"), dict):
        metadata = dict(value["metadata"])  # type: ignore[arg-type]
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
    return assistant_api(updated)


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
    metadata: dict[str, Any] | None,
    limit: int,
    offset: int,
) -> list[dict[str, Any]]:
    row = await load_row(runtime, access, id_or_graph_id)
    found = await runtime.db.read(
        lambda conn: repo.list_versions(
            conn, row["assistant_id"], metadata=metadata, limit=limit, offset=offset
        )
    )
    return [assistant_version_api(a) for a in found]


async def set_latest(
    runtime: AppRuntime, access: Access, id_or_graph_id: str, version: int
) -> dict[str, Any]:
    row = await load_row(runtime, access, id_or_graph_id, "update")
    updated = await runtime.db.write(
        lambda conn: repo.set_latest(conn, row["assistant_id"], version)
    )
    if updated is None:
        raise NotFound(f"Assistant {id_or_graph_id} has no version {version}")
    return assistant_api(updated)
