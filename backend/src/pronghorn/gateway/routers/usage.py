"""``GET /api/threads/{thread_id}/token-usage``: token usage of a thread, total, per run
and per model (DeerFlow's shape too: ``total_*``, ``total_runs``, ``by_model``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.usage import ThreadTokenUsage
from pronghorn.gateway.responses import JSONResponse
from pronghorn.persistence.repos import model_usage
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.runtime import Runtime

router = APIRouter(prefix="/api/threads/{thread_id}", tags=["usage"])

ACTIVE = ("pending", "running")


@router.get("/token-usage", response_model=ThreadTokenUsage, responses=errors(404, 422))
async def token_usage(
    thread_id: str,
    include_active: bool = Query(
        default=False, description="Also count the model calls of runs still in flight."
    ),
    runtime: Runtime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Sums over the thread's runs (input, output, total tokens, LLM calls), each run, and
    per model (``by_model``: the lead agent's model calls, with cost from
    ``models[].pricing``); runs in flight count only with ``include_active=true``. 404 for
    another user's thread."""
    tid = check_uuid(thread_id, "thread")
    await load_thread(runtime, access, tid)
    async with runtime.db.read() as conn:
        total = await runs_repo.token_usage_for_thread(conn, tid)
        per_run = await runs_repo.token_usage_by_run(conn, tid)
        statuses = None if include_active else _settled(per_run)
        by_model = await model_usage.by_model_for_thread(conn, tid, statuses=statuses)
        active = await model_usage.active_for_thread(conn, tid, ACTIVE) if include_active else None
    if active is not None:
        total = {
            "input_tokens": total["input_tokens"] + active["input_tokens"],
            "output_tokens": total["output_tokens"] + active["output_tokens"],
            "total_tokens": total["total_tokens"]
            + active["input_tokens"]
            + active["output_tokens"],
            "llm_calls": total["llm_calls"] + active["llm_calls"],
        }
    counted = [r for r in per_run if include_active or r["status"] not in ACTIVE]
    return JSONResponse(
        {
            **total,
            "runs": per_run,
            "thread_id": tid,
            "total_input_tokens": total["input_tokens"],
            "total_output_tokens": total["output_tokens"],
            "total_runs": len(counted),
            "by_model": {m["model"]: m for m in by_model},
            "include_active": include_active,
        }
    )


def _settled(per_run: list[dict[str, object]]) -> list[str]:
    return sorted({str(r["status"]) for r in per_run if r["status"] not in ACTIVE})
