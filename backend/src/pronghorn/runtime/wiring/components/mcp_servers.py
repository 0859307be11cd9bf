"""The MCP servers component: the `McpManager`, discovering in the background, hot-reloaded."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from pronghorn.config.schema.app import AppConfig
from pronghorn.mcp.server_manager import McpManager
from pronghorn.runtime.wiring.app_runtime import AppRuntime


@contextlib.asynccontextmanager
async def mcp_servers(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    manager = McpManager(runtime.config.mcp, runtime.data_dir)

    async def _reload(old: AppConfig, new: AppConfig) -> None:
        if old.mcp != new.mcp:
            await manager.apply(new.mcp)

    remove = runtime.settings.add_listener(_reload)
    manager.start()  # returns at once: discovery runs in the background
    runtime.mcp = manager
    try:
        yield
    finally:
        remove()
        await manager.aclose()
