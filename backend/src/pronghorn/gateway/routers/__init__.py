"""Routers, one per API area, registered in one place."""

from __future__ import annotations

import importlib

from fastapi import FastAPI

# Each module exposes `router`; order matters only for overlapping paths.
ROUTER_MODULES = ("system", "assistants", "threads", "store")


def register_routers(app: FastAPI) -> None:
    for name in ROUTER_MODULES:
        module = importlib.import_module(f"pronghorn.gateway.routers.{name}")
        app.include_router(module.router)
