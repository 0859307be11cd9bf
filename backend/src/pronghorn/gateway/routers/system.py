"""Liveness, readiness, server info and config status."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Depends

from pronghorn import __version__
from pronghorn.auth.principal import Principal
from pronghorn.gateway.deps import get_principal, get_runtime
from pronghorn.gateway.models.errors import answers
from pronghorn.gateway.models.system import ConfigStatus, Health, Info, Ok, Ready
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter()


@router.get(
    "/health",
    response_model=None,
    responses={**answers(Health)},
)
async def health() -> dict[str, object]:
    return {"status": "ok"}


@router.get(
    "/ready",
    response_model=None,
    responses={**answers(Ready), 503: {"model": Ready, "description": "Not ready"}},
)
async def ready(runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    checks = {"database": await runtime.db.ping()}
    checks["broker"] = await runtime.broker.ping()
    ok = all(checks.values())
    return JSONResponse(
        {
            "status": "ok" if ok else "unavailable",
            "checks": checks,
            "settles_waiting": runtime.db.outage_waits.count,
        },
        status_code=200 if ok else 503,
    )


@router.get(
    "/api/langgraph/ok",
    response_model=None,
    responses={**answers(Ok)},
)
async def ok() -> dict[str, object]:
    return {"ok": True}


@router.get(
    "/api/langgraph/info",
    response_model=None,
    responses={**answers(Info)},
)
async def info(runtime: AppRuntime = Depends(get_runtime)) -> dict[str, object]:
    return {
        "version": __version__,
        "server": "pronghorn",
        "flags": {"assistants": True, "crons": True, "langsmith": False},
        "graphs": runtime.graphs.ids(),
        "graph_errors": [p.as_dict() for p in runtime.graphs.problems()],
    }


@router.get(
    "/api/config/status",
    response_model=None,
    responses={**answers(ConfigStatus)},
)
async def config_status(
    runtime: AppRuntime = Depends(get_runtime), principal: Principal = Depends(get_principal)
) -> dict[str, object]:
    """This replica's config status (`source_path` only for admins); for admins also
    `replica_id` (this one) and `replicas`
    (every live replica's card: which config version each runs, and its load)."""
    status = runtime.settings.status()
    if not principal.is_admin:  # where the config lives on the host is the admins' business
        status["source_path"] = None
    last = runtime.graphs.last_reload
    status["graphs"] = {
        "loaded": runtime.graphs.ids(),
        "failed": [p.as_dict() for p in runtime.graphs.problems()],
        "last_reload": last.as_dict() if last is not None else None,
    }
    if principal.is_admin and runtime.is_started("replicas"):
        cards, complete = await runtime.replicas.cluster()
        status["replica_id"] = runtime.replicas.replica_id
        status["replicas"] = [asdict(card) for card in cards]
        status["replicas_complete"] = complete
    return status
