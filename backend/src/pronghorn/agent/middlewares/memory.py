"""Memory in the lead agent's chain.

- ``MemoryInjectionMiddleware`` (request projection): before each model call, the user's
  summaries and most relevant facts (for the latest user message), corrections first, are
  appended to the system message within ``memory.max_injection_tokens``. Request-only: the
  stored messages never contain it.
- ``MemoryUpdateMiddleware`` (finalization, ``after_agent``): the run's new user input and
  final answer go to the memory service's queue. Never blocks nor fails the run.
- ``memory_flush_hook``: what summarization is about to compact goes to the queue first.

Whose memory: the principal the run executes as (``langgraph_auth_user_id``) and the custom
agent (``context.agent_name``); a run without a user has no memory.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._util import run_config, run_ids, text_of, with_system_note
from pronghorn.agent.middlewares.folding import Middleware
from pronghorn.agent.state import ThreadState
from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.memory.service import MemoryService
from pronghorn.memory.turns import as_turns, last_exchange, scope_of

log = logging.getLogger("pronghorn.agent.memory")


class MemoryInjectionMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, service: MemoryService, *, max_tokens: int, agent_name: str | None):
        super().__init__()
        self.service = service
        self.max_tokens = max_tokens
        self.agent_name = agent_name

    async def _project(self, request: ModelRequest) -> ModelRequest:
        scope = scope_of(run_config(), self.agent_name)
        if scope is None or not self.service.config.enabled:
            return request
        last = next((m for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)
        try:
            note = await self.service.context(
                scope, text_of(last) if last else None, self.max_tokens
            )
        except Exception as exc:  # memory must never fail a run
            log.warning("memory injection skipped: %s", exc)
            return request
        return with_system_note(request, note) if note else request

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(request)  # runs are async; a sync caller gets no memory

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        return await handler(await self._project(request))


class MemoryUpdateMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, service: MemoryService, *, model_name: str, agent_name: str | None):
        super().__init__()
        self.service = service
        self.model_name = model_name
        self.agent_name = agent_name

    async def aafter_agent(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        try:
            config = run_config()
            scope = scope_of(config, self.agent_name)
            turns = last_exchange(list(state.get("messages") or []))
            if scope is not None and turns:
                self.service.enqueue(
                    scope,
                    turns,
                    thread_id=run_ids(config).thread_id,
                    model_name=self.model_name,
                )
        except Exception as exc:  # memory must never fail a run
            log.warning("memory enqueue skipped: %s", exc)
        return None


def memory_flush_hook(
    service: MemoryService, *, model_name: str, agent_name: str | None
) -> Callable[[Sequence[BaseMessage]], None]:
    """For summarization: queue the messages it is about to compact."""

    def flush(messages: Sequence[BaseMessage]) -> None:
        try:
            config = run_config()
            scope = scope_of(config, agent_name)
            if scope is not None:
                service.enqueue(
                    scope,
                    as_turns(messages),
                    thread_id=run_ids(config).thread_id,
                    model_name=model_name,
                )
        except Exception as exc:
            log.warning("memory flush skipped: %s", exc)

    return flush


@dataclass(frozen=True)
class MemoryChain:
    """The memory parts of one lead agent's chain (all empty without memory)."""

    injection: list[Middleware] = field(default_factory=list)
    finalization: list[Middleware] = field(default_factory=list)
    before_compact: Callable[[Sequence[BaseMessage]], None] | None = None


def memory_chain(
    service: MemoryService | None,
    cfg: MemoryConfig,
    *,
    model_name: str,
    agent_name: str | None,
) -> MemoryChain:
    """Injection when enabled; the after-run update and the summarization flush in
    ``middleware`` mode (``tool`` mode: the tools write instead)."""
    if service is None or not cfg.enabled:
        return MemoryChain()
    injection: list[Middleware] = []
    if cfg.injection_enabled:
        injection.append(
            MemoryInjectionMiddleware(
                service, max_tokens=cfg.max_injection_tokens, agent_name=agent_name
            )
        )
    if cfg.mode != "middleware":
        return MemoryChain(injection=injection)
    return MemoryChain(
        injection=injection,
        finalization=[
            MemoryUpdateMiddleware(service, model_name=model_name, agent_name=agent_name)
        ],
        before_compact=memory_flush_hook(service, model_name=model_name, agent_name=agent_name),
    )
