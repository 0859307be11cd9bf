"""Routers, one per API area, registered in one place."""

from __future__ import annotations

from fastapi import FastAPI

from pronghorn.gateway.routers import assistants, models, runs, store, system, threads


def register_routers(app: FastAPI) -> None:
    for module in (system, assistants, threads, runs, store, models):
        app.include_router(module.router)
