"""Base for middlewares that only rewrite the model request (request projection phase)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from pronghorn.agent.state import ThreadState


class RequestProjection(AgentMiddleware[ThreadState]):
    """Subclasses implement `_project(request) -> request`; it runs before every model call,
    sync or async, and never changes the stored state."""

    def _project(self, request: ModelRequest) -> ModelRequest:
        raise NotImplementedError

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._project(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        return await handler(self._project(request))
