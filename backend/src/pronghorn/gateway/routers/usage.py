"""``GET /api/threads/{thread_id}/token-usage``: token usage of a thread, total and per run."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from pronghorn.gateway.deps import check_uuid, get_runtime
from pronghorn.gateway.errors import not_found
from pronghorn.gateway.responses import JSONResponse
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.runtime import Runtime

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["usage"])


@router.get("/token-usage")
async def token_usage(thread_id: str, runtime: Runtime = Depends(get_runtime)) -> JSONResponse:
    """Sums over the thread's runs (input, output, total tokens, LLM calls) and each run."""
    tid = check_uuid(thread_id, "thread")
    async with runtime.db.read() as conn:
        if await threads_repo.get_row(conn, tid) is None:
            raise not_found("Thread", tid)
        total = await runs_repo.token_usage_for_thread(conn, tid)
        per_run = await runs_repo.token_usage_by_run(conn, tid)
    return JSONResponse({**total, "runs": per_run})
