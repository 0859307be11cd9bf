"""``GET /api/threads/{thread_id}/token-usage``: token usage of a thread, total, per run
and per model (DeerFlow's shape too: ``total_*``, ``total_runs``, ``by_model``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.usage import ThreadTokenUsage
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.services.thread_usage import thread_usage
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["usage"])


@router.get("/token-usage", response_model=ThreadTokenUsage, responses=errors(404, 422))
async def token_usage(
    thread_id: str,
    include_active: bool = Query(
        default=False, description="Also count the model calls of runs still in flight."
    ),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Sums over the thread's runs (input, output, total tokens, LLM calls), each run, and
    per model (``by_model``: the lead agent's model calls, with cost from
    ``models[].pricing``); runs in flight count only with ``include_active=true``. 404 for
    another user's thread."""
    tid = check_uuid(thread_id, "thread")
    usage = await thread_usage(runtime, access, tid, include_active=include_active)
    return JSONResponse(
        {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens,
            "llm_calls": usage.llm_calls,
            "runs": usage.runs,
            "thread_id": tid,
            "total_input_tokens": usage.input_tokens,
            "total_output_tokens": usage.output_tokens,
            "total_runs": usage.counted_runs,
            "by_model": {m["model"]: m for m in usage.by_model},
            "include_active": include_active,
        }
    )
