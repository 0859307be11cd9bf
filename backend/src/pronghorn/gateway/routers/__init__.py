"""Routers, one per API area, registered in one place."""

from __future__ import annotations

from fastapi import FastAPI

from pronghorn.gateway.routers import (
    assistants,
    crons,
    files,
    models,
    runs,
    store,
    system,
    threads,
    usage,
)


def register_routers(app: FastAPI) -> None:
    for module in (system, assistants, threads, crons, runs, store, models, files, usage):
        app.include_router(module.router)
