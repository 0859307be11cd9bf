"""The memory component: the app's `MemoryService`, on the runtime's store, started before
the run manager and stopped after it (so the last runs' updates are drained)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from langchain_core.language_models import BaseChatModel

from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.memory.service import MemoryService
from pronghorn.memory.store import MemoryRepository
from pronghorn.runtime.wiring.app_runtime import AppRuntime


@contextlib.asynccontextmanager
async def memory(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    def settings() -> MemoryConfig:
        return runtime.config.memory

    def model_for(name: str | None) -> BaseChatModel | None:
        # The offline demo model cannot write memory updates: skip them quietly.
        if runtime.models.resolve(name).provider == "demo":
            return None
        return runtime.models.create(name, thinking_enabled=False)

    service = MemoryService(MemoryRepository(runtime.store), settings=settings, model_for=model_for)
    await service.start()
    runtime.memory = service
    try:
        yield
    finally:
        await service.stop()
