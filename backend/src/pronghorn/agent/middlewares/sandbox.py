"""State prep + finalization: the sandbox's lifetime around a run.

Tools acquire the sandbox lazily on their first use (the provider caches it per thread).
This middleware notes which threads ran a tool during the run and, in ``after_agent``,
hands the sandbox back to the provider with ``release`` (a no-op for the local provider; a
container provider may park it in a warm pool). A run that never called a tool never
touches the sandbox.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._util import run_ids
from pronghorn.agent.state import ThreadState
from pronghorn.agent.tool_types import ToolResult, request_runtime
from pronghorn.sandbox.base import SandboxProvider

log = logging.getLogger("pronghorn.agent.sandbox")


class SandboxMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, provider: SandboxProvider | None) -> None:
        super().__init__()
        self.provider = provider
        self._used: set[tuple[str, str]] = set()

    def _note(self, request: ToolCallRequest) -> None:
        ids = run_ids(getattr(request_runtime(request), "config", None))
        if ids.thread_id is not None:
            self._used.add((ids.user_id, ids.thread_id))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        self._note(request)
        return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        self._note(request)
        return await handler(request)

    async def aafter_agent(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        ids = run_ids()
        if self.provider is None or ids.thread_id is None:
            return None  # no provider, or no thread: nothing was noted (see _note)
        key = (ids.user_id, ids.thread_id)
        if key not in self._used:
            return None
        self._used.discard(key)
        try:
            sandbox = await self.provider.acquire(ids.user_id, ids.thread_id)
            await self.provider.release(sandbox)
        except Exception:  # releasing must never fail the run
            log.warning("sandbox release failed for thread %s", ids.thread_id, exc_info=True)
        return None
