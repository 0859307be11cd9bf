"""Crons as a service: scheduled runs owned by the principal that made them.

A cron belongs to its creator, and its runs execute as that creator (the principal is kept
on the row, so a cron fires as its owner after a restart too). Another user's cron is *not
found*; search and count return the caller's own (every user's for an admin who asked).
The gateway parses and validates the request (schedule, payload); this module decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy.engine import Connection

from pronghorn.auth.authorizer import Action
from pronghorn.persistence.errors import AssistantMissing
from pronghorn.persistence.records.crons import CronRecord
from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.repos import assistants as assistants_repo
from pronghorn.persistence.repos import crons as repo
from pronghorn.persistence.repos.common import OwnerScope, iso, new_id
from pronghorn.runtime.access import Access, principal_record
from pronghorn.runtime.errors import NotFound, refusals_mapped
from pronghorn.runtime.owned import authorize, load_thread, visible
from pronghorn.runtime.services.scheduler import next_run

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


@dataclass(frozen=True, kw_only=True)
class CronSpec:
    """A validated cron: when it fires and the run it makes."""

    assistant_id: str
    schedule: str
    timezone: str | None
    end_time: datetime | None
    enabled: bool
    on_run_completed: str | None
    payload: JsonObject
    metadata: JsonObject


class CronJson(TypedDict):
    """The API's Cron, as this service answers it."""

    cron_id: str
    assistant_id: str
    thread_id: str | None
    schedule: str
    timezone: str | None
    end_time: str | None
    enabled: bool
    on_run_completed: str | None
    payload: JsonObject
    metadata: JsonObject
    user_id: str | None
    next_run_date: str | None
    created_at: str | None
    updated_at: str | None


def cron_json(cron: CronRecord) -> CronJson:
    """The API's Cron JSON of a cron: the one mapping, for every answer of this service
    (JSON for the router to answer, payload and metadata as stored)."""
    return {
        "cron_id": cron.cron_id,
        "assistant_id": cron.assistant_id,
        "thread_id": cron.thread_id,
        "schedule": cron.schedule,
        "timezone": cron.timezone,
        "end_time": iso(cron.end_time),
        "enabled": cron.enabled,
        "on_run_completed": cron.on_run_completed,
        "payload": cron.payload,
        "metadata": cron.metadata,
        "user_id": cron.user_id,
        "next_run_date": iso(cron.next_run_date),
        "created_at": iso(cron.created_at),
        "updated_at": iso(cron.updated_at),
    }


def _first_run(spec: CronSpec) -> datetime | None:
    first = next_run(spec.schedule, spec.timezone, datetime.now(UTC))
    if spec.end_time is not None and first >= spec.end_time:
        return None
    return first


def _value(spec: CronSpec, **extra: object) -> dict[str, object]:
    return {
        **extra,
        "assistant_id": spec.assistant_id,
        "schedule": spec.schedule,
        "payload": spec.payload,
        "metadata": spec.metadata,
        "enabled": spec.enabled,
    }


def _stamped(value: dict[str, object], spec: CronSpec) -> JsonObject:
    """The metadata after the authorizer saw `value` (it may stamp or replace it)."""
    metadata = json_object(value.get("metadata"))
    return metadata if metadata is not None else spec.metadata


def _poke(runtime: AppRuntime) -> None:
    if runtime.is_started("scheduler"):
        runtime.scheduler.poke()


async def create(
    runtime: AppRuntime, access: Access, spec: CronSpec, thread_id: str | None
) -> CronJson:
    """A new cron of `access`'s principal, on one of its threads or stateless."""
    return cron_json(await create_row(runtime, access, spec, thread_id))


async def create_row(
    runtime: AppRuntime, access: Access, spec: CronSpec, thread_id: str | None
) -> CronRecord:
    """`create`'s cron, as its record."""
    value = _value(spec, thread_id=thread_id)
    await authorize(runtime, access, "crons", "create", value)
    metadata = _stamped(value, spec)
    if thread_id is not None:
        await load_thread(runtime, access, thread_id, "create_run", {"thread_id": thread_id})
    first = _first_run(spec)

    def unit(conn: Connection) -> CronRecord:
        assistant = assistants_repo.resolve_assistant(
            conn, spec.assistant_id, owner_scope=access.owner_scope
        )
        if assistant is None:
            raise AssistantMissing(spec.assistant_id)
        return repo.insert_cron(
            conn,
            cron_id=new_id(),
            assistant_id=assistant.assistant_id,
            thread_id=thread_id,
            schedule=spec.schedule,
            timezone=spec.timezone,
            end_time=spec.end_time,
            enabled=spec.enabled,
            on_run_completed=(spec.on_run_completed or "delete") if thread_id is None else None,
            payload=spec.payload,
            metadata=metadata,
            user_id=access.identity,
            owner_id=access.identity,
            principal=principal_record(access.principal),
            next_run_date=first,
        )

    with refusals_mapped():
        cron = await runtime.db.write(unit)
    _poke(runtime)
    return cron


async def assistant_key(
    runtime: AppRuntime, access: Access, assistant_id: str | None
) -> str | None:
    """Search filters accept a graph id too (its system assistant)."""
    if not assistant_id:
        return assistant_id
    found = await runtime.db.read(
        lambda conn: assistants_repo.resolve_assistant(
            conn, assistant_id, owner_scope=access.owner_scope
        )
    )
    return found.assistant_id if found else assistant_id


async def search(
    runtime: AppRuntime,
    access: Access,
    *,
    assistant_id: str | None,
    thread_id: str | None,
    enabled: bool | None,
    metadata: dict[str, object] | None,
    limit: int,
    offset: int,
    sort_by: str,
    sort_order: str,
) -> tuple[list[CronJson], int]:
    found, total = await search_rows(
        runtime,
        access,
        assistant_id=assistant_id,
        thread_id=thread_id,
        enabled=enabled,
        metadata=metadata,
        limit=limit,
        offset=offset,
        sort_by=sort_by,
        sort_order=sort_order,
    )
    return [cron_json(cron) for cron in found], total


async def search_rows(
    runtime: AppRuntime,
    access: Access,
    *,
    assistant_id: str | None,
    thread_id: str | None,
    enabled: bool | None,
    metadata: dict[str, object] | None,
    limit: int,
    offset: int,
    sort_by: str,
    sort_order: str,
) -> tuple[list[CronRecord], int]:
    """`search`'s page of crons, as their records, and how many match."""
    key = await assistant_key(runtime, access, assistant_id)
    value: dict[str, object] = {
        "assistant_id": key,
        "thread_id": thread_id,
        "metadata": metadata,
        "limit": limit,
        "offset": offset,
    }
    filt = await authorize(runtime, access, "crons", "search", value)
    return await runtime.db.read(
        lambda conn: repo.search(
            conn,
            assistant_id=key,
            thread_id=thread_id,
            enabled=enabled,
            metadata=metadata,
            limit=limit,
            offset=offset,
            sort_by=sort_by,
            sort_order=sort_order,
            scope=OwnerScope(owner_id=access.owner_scope, filter=filt),
        )
    )


async def count(
    runtime: AppRuntime,
    access: Access,
    *,
    assistant_id: str | None,
    thread_id: str | None,
    metadata: dict[str, object] | None,
) -> int:
    key = await assistant_key(runtime, access, assistant_id)
    value: dict[str, object] = {"assistant_id": key, "thread_id": thread_id, "metadata": metadata}
    filt = await authorize(runtime, access, "crons", "search", value)
    return await runtime.db.read(
        lambda conn: repo.count(
            conn,
            assistant_id=key,
            thread_id=thread_id,
            metadata=metadata,
            scope=OwnerScope(owner_id=access.owner_scope, filter=filt),
        )
    )


async def _load(
    runtime: AppRuntime,
    access: Access,
    cron_id: str,
    action: Action,
    value: dict[str, object] | None = None,
) -> CronRecord:
    filt = await authorize(runtime, access, "crons", action, value or {"cron_id": cron_id})
    cron = await runtime.db.read(lambda conn: repo.get_row(conn, cron_id))
    if cron is None or not visible(access, cron.owner_id, cron.metadata, filt):
        raise NotFound.of("Cron", cron_id)
    return cron


async def get_row(
    runtime: AppRuntime, access: Access, cron_id: str, action: Action = "read"
) -> CronRecord:
    """The cron, if `access` may `action` it (else not found)."""
    return await _load(runtime, access, cron_id, action)


async def get(runtime: AppRuntime, access: Access, cron_id: str) -> CronJson:
    return cron_json(await _load(runtime, access, cron_id, "read"))


async def update(runtime: AppRuntime, access: Access, cron_id: str, spec: CronSpec) -> CronJson:
    """Replace the cron's schedule and payload (the gateway merged the patch into it)."""
    value = _value(spec, cron_id=cron_id)
    current = await _load(runtime, access, cron_id, "update", value)
    metadata = _stamped(value, spec)
    nxt = _first_run(spec)

    def unit(conn: Connection) -> CronRecord:
        assistant_id = current.assistant_id
        if spec.assistant_id != assistant_id:
            assistant = assistants_repo.resolve_assistant(
                conn, spec.assistant_id, owner_scope=access.owner_scope
            )
            if assistant is None:
                raise AssistantMissing(spec.assistant_id)
            assistant_id = assistant.assistant_id
        return repo.update_cron(
            conn,
            cron_id,
            assistant_id=assistant_id,
            schedule=spec.schedule,
            timezone=spec.timezone,
            end_time=spec.end_time,
            enabled=spec.enabled,
            on_run_completed=spec.on_run_completed if current.thread_id is None else None,
            payload=spec.payload,
            metadata=metadata,
            next_run_date=nxt,
        )

    with refusals_mapped():  # deleted meanwhile: not found
        cron = await runtime.db.write(unit)
    _poke(runtime)
    return cron_json(cron)


async def delete(runtime: AppRuntime, access: Access, cron_id: str) -> None:
    await _load(runtime, access, cron_id, "delete")
    if not await runtime.db.write(lambda conn: repo.delete_cron(conn, cron_id)):
        raise NotFound.of("Cron", cron_id)
