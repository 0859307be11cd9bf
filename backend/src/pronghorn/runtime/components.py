"""The components the Runtime starts after its core, in order (stopped in reverse).

Each is an async context manager factory taking the Runtime; it sets its attribute on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from pronghorn.runtime.runtime import Runtime


@contextlib.asynccontextmanager
async def _models(runtime: Runtime) -> AsyncIterator[None]:
    try:
        from pronghorn.models.factory import ModelFactory
    except ImportError:  # the models package is optional until it lands
        yield
        return
    runtime.models = ModelFactory(runtime.config)

    def _refresh(old: Any, new: Any) -> None:
        runtime.models = ModelFactory(new)

    runtime.settings.add_listener(_refresh)
    yield


COMPONENTS: list[Callable[[Runtime], contextlib.AbstractAsyncContextManager[None]]] = [
    _models,
]
