"""GET /api/models on a bare FastAPI app with a stub runtime."""

from __future__ import annotations

from types import SimpleNamespace

import httpx
from fastapi import FastAPI

from pronghorn.config.schema.app import AppConfig
from pronghorn.gateway.routers.models import router
from pronghorn.models import ModelFactory


def app_with(models: list[dict]) -> FastAPI:
    app = FastAPI()
    app.include_router(router)
    config = AppConfig.model_validate({"models": models})
    app.state.runtime = SimpleNamespace(models=ModelFactory(config, env={}))
    return app


async def get(app: FastAPI, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get(path)


async def test_lists_models_and_default_without_secrets():
    app = app_with(
        [{"name": "gpt", "model": "gpt-4o", "api_key": "sk-top-secret", "supports_vision": True}]
    )
    resp = await get(app, "/api/models")
    assert resp.status_code == 200
    body = resp.json()
    assert body["default"] == "gpt"
    assert [m["name"] for m in body["models"]] == ["gpt"]
    assert body["models"][0]["supports_vision"] is True
    assert "sk-top-secret" not in resp.text


async def test_demo_only_and_single_model_lookup():
    app = app_with([])
    body = (await get(app, "/api/models")).json()
    assert body == {"models": [body["models"][0]], "default": "demo"}
    assert body["models"][0]["is_demo"] is True
    assert (await get(app, "/api/models/demo")).json()["name"] == "demo"
    missing = await get(app, "/api/models/nope")
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
