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


def register_routers(app: FastAPI) -> None:
    for module in (
        system,
        auth,
        auth_keys,
        auth_admin,
        oidc,
        assistants,
        thread_search,
        threads,
        crons,
        runs,
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
    ):
        app.include_router(module.router)
