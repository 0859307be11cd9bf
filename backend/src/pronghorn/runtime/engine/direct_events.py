"""The run executor's end of `pronghorn.agent.stream_events`: a callback handler that
appends the custom events tools dispatch past the stream writer to the run's event log."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler

from pronghorn.agent.stream_events import DIRECT_EVENT


class DirectEvents(AsyncCallbackHandler):
    """Publishes each `DIRECT_EVENT` as a `custom` event (the run asked for that mode)."""

    raise_error = False
    run_inline = True

    def __init__(self, emit: Callable[[str, object], Awaitable[None]]) -> None:
        self.emit = emit

    async def on_custom_event(
        self,
        name: str,
        data: object,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        if name == DIRECT_EVENT:
            await self.emit("custom", data)
