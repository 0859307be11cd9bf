"""Routers, one per API area, registered in one place."""

from __future__ import annotations

from fastapi import FastAPI

from pronghorn.gateway.routers import (
    assistants,
    auth,
    auth_admin,
    auth_keys,
    crons,
    files,
    metrics,
    models,
    oidc,
    runs,
    store,
    system,
    threads,
    usage,
)


def register_routers(app: FastAPI) -> None:
    for module in (
        system,
        auth,
        auth_keys,
        auth_admin,
        oidc,
        assistants,
        threads,
        crons,
        runs,
        store,
        models,
        files,
        usage,
        metrics,
    ):
        app.include_router(module.router)
