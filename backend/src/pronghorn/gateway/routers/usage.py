"""``GET /api/threads/{thread_id}/token-usage``: token usage of a thread, total and per run."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.responses import JSONResponse
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.runtime import Runtime

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["usage"])


@router.get("/token-usage")
async def token_usage(
    thread_id: str, runtime: Runtime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """Sums over the thread's runs (input, output, total tokens, LLM calls) and each run;
    404 for another user's thread."""
    tid = check_uuid(thread_id, "thread")
    await load_thread(runtime, access, tid)
    async with runtime.db.read() as conn:
        total = await runs_repo.token_usage_for_thread(conn, tid)
        per_run = await runs_repo.token_usage_by_run(conn, tid)
    return JSONResponse({**total, "runs": per_run})
