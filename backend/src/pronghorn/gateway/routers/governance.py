"""``GET /api/usage/budget``: the caller's model usage today and this month, against the
configured budgets (docs/governance.md)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.models.usage import Budget
from pronghorn.gateway.responses import JSONResponse
from pronghorn.governance.budget import is_limited, remaining
from pronghorn.runtime.access import Access
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/usage", tags=["usage"])


@router.get("/budget", response_model=Budget)
async def my_budget(
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Limits, usage and what is left, per window (``daily``, ``monthly``; ``per_run`` has
    the limits of one run, its usage being the run's own). ``*_remaining`` is null where
    no limit is set."""
    budgets = runtime.config.budgets
    spent = await runtime.governance.spend("", access.identity)
    windows = remaining(budgets, spent)
    per_run = windows.pop("run")
    return JSONResponse(
        {
            "owner_id": access.identity,
            "limited": is_limited(budgets),
            "daily": windows["daily"],
            "monthly": windows["monthly"],
            "per_run": {
                k: v for k, v in per_run.items() if k.endswith("_limit") or k.endswith("_limit_usd")
            },
        }
    )
