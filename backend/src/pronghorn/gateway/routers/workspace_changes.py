"""`GET /api/threads/{id}/runs/{run_id}/workspace-changes`: the files a run created,
changed or deleted in its thread's workspace and outputs (runtime/engine/workspace_changes.py), in
DeerFlow's shape. Another user's thread or run is not found."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.workspace_changes import WorkspaceChanges
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.workspace_changes import run_changes
from pronghorn.runtime.services.thread_messages import load_run
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(tags=["deerflow"], route_class=StrictJSONRoute)


@router.get(
    "/api/threads/{thread_id}/runs/{run_id}/workspace-changes",
    response_model=WorkspaceChanges,
    responses=errors(404, 422),
)
async def workspace_changes(
    thread_id: str,
    run_id: str,
    include_files: bool = Query(default=True),
    include_diff: bool = Query(default=True),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """`available: false` when the run recorded no change. Diffs are unified diffs of text
    files, bounded per file and in total (`limits`); secrets-looking files never get one."""
    tid, rid = check_uuid(thread_id, "thread"), check_uuid(run_id, "run")
    await load_run(runtime, access, tid, rid)
    found = await run_changes(
        runtime, tid, rid, include_files=include_files, include_diff=include_diff
    )
    return JSONResponse(found)
