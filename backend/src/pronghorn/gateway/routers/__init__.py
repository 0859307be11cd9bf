"""Routers, one per API area, registered in one place."""

from __future__ import annotations

from fastapi import FastAPI

from pronghorn.gateway.protocols import a2a_server, openai_chat
from pronghorn.gateway.routers import (
    agents,
    assistants,
    auth,
    auth_admin,
    auth_keys,
    channels,
    channels_config,
    crons,
    deerflow_auth,
    deerflow_compat,
    feedback,
    files,
    governance,
    integrations,
    mcp,
    memory,
    metrics,
    models,
    oidc,
    runs,
    scheduled_tasks,
    skills,
    store,
    system,
    thread_search,
    threads,
    tools,
    usage,
    wecom_callback,
    workspace_changes,
)

FIRST = (crons, runs)
"""Registered ahead of the rest, for the runs' hot paths: FastAPI tries the routers in
order, matching a request against every route of each router before the one that takes
it, and a router's match is not cheap (~0.1 ms for the 48 routes of the eight routers that
came before `runs` here, measured on the test machine). No route of these two routers
shares a path with another router's (`tests/unit/test_router_order.py`), so registering
them first changes no route's precedence; crons stays before runs (`/runs/crons`)."""


REST = (
    system,
    auth,
    auth_keys,
    auth_admin,
    oidc,
    assistants,
    thread_search,
    threads,
    store,
    models,
    files,
    usage,
    mcp,
    skills,
    tools,
    agents,
    openai_chat,
    a2a_server,
    governance,
    feedback,
    deerflow_auth,
    scheduled_tasks,
    workspace_changes,
    deerflow_compat,
    memory,
    channels_config,
    channels,
    integrations,
    wecom_callback,
    metrics,
)


def register_routers(app: FastAPI) -> None:
    for module in (*FIRST, *REST):
        app.include_router(module.router)
