"""Helpers of the memory tests: a service on a real LangGraph store with a scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langgraph.store.memory import InMemoryStore

from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.memory.records import MemoryScope
from pronghorn.memory.service import MemoryService
from pronghorn.memory.store import MemoryRepository
from pronghorn.memory.updater import Turn
from pronghorn.models import ScriptedChatModel
from pronghorn.models.steps import as_step
from support.scripted import scripted_model

ALICE = MemoryScope("alice")


def answer(**parts: Any) -> dict[str, Any]:
    """A scripted step whose text is a memory update answer."""
    return {"text": json.dumps(parts)}


def set_script(model: ScriptedChatModel, steps: list[dict[str, Any]]) -> None:
    model.script = [as_step(s) for s in steps]


def exchange(user: str, assistant: str, n: int = 0) -> list[Turn]:
    return [Turn("user", user, f"h{n}"), Turn("assistant", assistant, f"a{n}")]


class Holder:
    """A mutable config the service reads live (as the runtime's config holder)."""

    def __init__(self, **cfg: Any) -> None:
        self.cfg = MemoryConfig(**{"debounce_s": 0, **cfg})

    def __call__(self) -> MemoryConfig:
        return self.cfg


@asynccontextmanager
async def service(
    steps: list[dict[str, Any]], **cfg: Any
) -> AsyncIterator[tuple[MemoryService, ScriptedChatModel]]:
    model = scripted_model(script=steps, cursor="calls")
    svc = MemoryService(
        MemoryRepository(InMemoryStore()), settings=Holder(**cfg), model_for=lambda _name: model
    )
    await svc.start()
    try:
        yield svc, model
    finally:
        await svc.stop()
