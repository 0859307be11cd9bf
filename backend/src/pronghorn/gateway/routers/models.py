"""``GET /api/models``: the chat models a run may name, and the default one."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request

from pronghorn.gateway.models.catalog import ModelInfo, ModelList
from pronghorn.gateway.models.errors import answers, errors
from pronghorn.models.factory import ModelFactory

router = APIRouter(tags=["models"])


def _factory(request: Request) -> ModelFactory:
    return request.app.state.runtime.models


@router.get(
    "/api/models",
    response_model=None,
    responses={**answers(ModelList)},
)
async def list_models(request: Request) -> dict[str, object]:
    """Configured models (plus the offline demo model when none is usable); never secrets."""
    factory = _factory(request)
    return {"models": factory.list_models(), "default": factory.default_model_name()}


@router.get(
    "/api/models/{name}",
    response_model=None,
    responses={**answers(ModelInfo), **errors(404)},
)
async def get_model(name: str, request: Request) -> dict[str, object]:
    """One model of the list, or 404."""
    for model in _factory(request).list_models():
        if model["name"] == name:
            return model
    raise HTTPException(status_code=404, detail=f"Model {name!r} not found")
