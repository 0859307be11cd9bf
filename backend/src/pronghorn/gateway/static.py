"""Serve the built web UI at `/` with an SPA fallback and long caching for hashed assets."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from pronghorn.config.schema.app import AppConfig

API_PREFIXES = ("/api/", "/health", "/ready", "/metrics", "/docs", "/openapi.json")


def find_ui_dir(config: AppConfig, base_dir: Path) -> Path | None:
    candidates: list[Path] = []
    if config.server.static_dir:
        candidates.append((base_dir / config.server.static_dir).resolve())
    here = Path(__file__).resolve()
    candidates.append(here.parents[4] / "frontend" / "dist")  # repo checkout
    candidates.append(base_dir / "frontend" / "dist")
    for cand in candidates:
        if (cand / "index.html").is_file():
            return cand
    return None


class SpaStaticFiles(StaticFiles):
    """Unknown non-API paths fall back to index.html; hashed assets are cached for a year."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            response = await super().get_response(path, scope)
        except HTTPException as exc:
            if exc.status_code != 404 or scope["path"].startswith(API_PREFIXES):
                raise
            response = await super().get_response("index.html", scope)
        if response.status_code == 404 and not scope["path"].startswith(API_PREFIXES):
            response = await super().get_response("index.html", scope)
        if path.startswith("assets/") and response.status_code == 200:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        elif response.status_code == 200:
            response.headers["Cache-Control"] = "no-cache"
        return response


def mount_ui(app: FastAPI, config: AppConfig, base_dir: Path) -> None:
    ui_dir = find_ui_dir(config, base_dir)
    if ui_dir is not None:
        app.mount("/", SpaStaticFiles(directory=ui_dir, html=True), name="ui")
