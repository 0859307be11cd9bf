"""The channels component: a `ChannelManager` started after the AppRuntime's components (it
starts runs through `runtime.runs`) and stopped before them; hot-reloaded."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from pronghorn.channels.channel_manager import ChannelManager
from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.wiring.app_runtime import AppRuntime


@contextlib.asynccontextmanager
async def channels(runtime: AppRuntime) -> AsyncGenerator[ChannelManager, None]:
    manager = ChannelManager(runtime)

    async def _reload(old: AppConfig, new: AppConfig) -> None:
        if old.channels != new.channels:
            await manager.apply(old, new)

    remove = runtime.settings.add_listener(_reload)
    await manager.start()
    try:
        yield manager
    finally:
        remove()
        await manager.aclose()
