"""``GET /api/tools``: the agent's tools, their groups and whether the config offers them."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from pronghorn.gateway.deps import get_runtime
from pronghorn.gateway.models.skills import ToolCatalog
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.services.tool_catalog import tool_catalog
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/tools", tags=["tools"])


@router.get("", response_model=ToolCatalog)
async def list_tools(runtime: AppRuntime = Depends(get_runtime)) -> JSONResponse:
    """Built-in and configured tools (``tools:`` in config.yaml decides which are offered);
    ``errors`` lists ``tools.extra`` entries that failed to import."""
    return JSONResponse(await tool_catalog(runtime))
