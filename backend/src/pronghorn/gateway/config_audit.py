"""Record each applied config reload in the audit log (which key paths changed, never
their values): the gateway subscribes to the holder, so config/ knows nothing of auth."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from pronghorn.auth import audit
from pronghorn.config.restart import changed_paths
from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.auth")


def reload_recorder(runtime: AppRuntime) -> Callable[[AppConfig, AppConfig], Awaitable[None]]:
    async def on_reload(old: AppConfig, new: AppConfig) -> None:
        try:
            await audit.record(
                runtime.db, "config.reload", detail={"changed": changed_paths(old, new)}
            )
        except Exception:
            log.exception("could not record the config reload in the audit log")

    return on_reload
