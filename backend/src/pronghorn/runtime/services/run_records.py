"""Stored runs as a service: list a thread's runs, get one (with the run manager's live view
of a run in flight), delete a finished one. Runs are authorized as their thread: another
user's run is *not found*."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pronghorn.auth.authorizer import Action
from pronghorn.persistence.repos import run_units
from pronghorn.persistence.repos import runs as repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Conflict, NotFound
from pronghorn.runtime.owned import authorize, load_thread, visible
from pronghorn.runtime.record_api import run_api

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


def in_flight(run: Mapping[str, object]) -> bool:
    """Whether the run is pending or running (somewhere in the cluster)."""
    return run["status"] in repo.INFLIGHT


async def list_runs(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    *,
    limit: int,
    offset: int,
    status: str | None,
) -> list[dict[str, object]]:
    """A page of the thread's runs, newest first."""
    await load_thread(runtime, access, thread_id)
    found = await runtime.db.read(
        lambda conn: repo.list_for_thread(
            conn, thread_id, limit=limit, offset=offset, status=status
        )
    )
    return [run_api(r) for r in found]


async def get_run(
    runtime: AppRuntime,
    access: Access,
    run_id: str,
    thread_id: str | None,
    action: Action = "read",
) -> dict[str, object]:
    """The run (of that thread, when given) if `access` may `action` its thread; `NotFound`
    for an unknown run and for another user's."""
    filt = await authorize(
        runtime, access, "threads", action, {"thread_id": thread_id, "run_id": run_id}
    )
    # The SDKs GET the run after every stream: one hop, not a multi-hop async session.
    found = await runtime.db.write(lambda conn: run_units.get_owned_run(conn, run_id, thread_id))
    if found is None or not visible(access, found.owner_id, found.thread_metadata, filt):
        raise NotFound.of("Run", run_id)
    return run_api(runtime.runs.overlay(found.run))


async def delete_run(runtime: AppRuntime, access: Access, thread_id: str, run_id: str) -> None:
    """Delete a finished run; `Conflict` while it is in flight (cancel it first)."""
    run = await get_run(runtime, access, run_id, thread_id, "delete")
    if in_flight(run):
        raise Conflict(f"Run {run_id} is {run['status']}; cancel it before deleting it")
    await runtime.db.write(lambda conn: repo.delete_run(conn, run_id))
