"""The lead agent graph factory, called by the graph registry for every access.

A run's agent is built from the config snapshot the run was accepted under (its models,
middleware settings and tools), never from whatever config is live when a queued run
starts; other accesses (state reads, schemas) use the live config, whose graph has the
same topology. Building the agent (model client, tools, middleware chain,
``create_agent`` compile) happens once per (config version, options, date), in a worker
thread, and is cached by the factory, so a run usually costs a dict lookup. The compiled
graph has no checkpointer: the registry attaches ours.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from pronghorn.agent.builder import AgentDeps, build_lead_agent
from pronghorn.agent.options import AgentOptions
from pronghorn.agent.state import AgentGraph
from pronghorn.config.holder import ConfigHolder
from pronghorn.governance.ports import GovernancePorts
from pronghorn.graphs.requests import GraphRequest
from pronghorn.mcp.server_manager import McpManager
from pronghorn.memory.service import MemoryService
from pronghorn.models.factory import ModelFactory
from pronghorn.sandbox.base import SandboxProvider
from pronghorn.skills.model import RunSkill, RunSkillSource
from pronghorn.subagents import SubagentExtension, SubagentPool

MAX_CACHED = 32

T = TypeVar("T")


class GraphCache:
    """A small LRU of compiled graphs, keyed by (config version, options, date)."""

    def __init__(self, max_size: int = MAX_CACHED) -> None:
        self.max_size = max_size
        self._items: OrderedDict[tuple[object, ...], AgentGraph] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0

    def get(self, key: tuple[object, ...]) -> AgentGraph | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def get_or_build(self, key: tuple[object, ...], build: Callable[[], AgentGraph]) -> AgentGraph:
        found = self.get(key)
        if found is not None:
            return found
        graph = build()
        with self._lock:
            self.builds += 1
            self._items[key] = graph
            while len(self._items) > self.max_size:
                self._items.popitem(last=False)
        return graph


class LeadAgentHost(Protocol):
    """What the factory reads from the app (the AppRuntime is one), when it first builds."""

    @property
    def settings(self) -> ConfigHolder: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def models(self) -> ModelFactory: ...
    @property
    def sandbox(self) -> SandboxProvider: ...
    @property
    def subagents(self) -> SubagentPool: ...
    @property
    def mcp(self) -> McpManager: ...
    @property
    def skills(self) -> RunSkillSource: ...
    @property
    def governance(self) -> GovernancePorts: ...
    @property
    def memory(self) -> MemoryService: ...


def run_identity(request: GraphRequest) -> str | None:
    """Who a run executes as (the executor sets it), None for other accesses."""
    if not request.executes:
        return None
    configurable: dict[str, object] = dict(request.config.get("configurable") or {})
    identity = configurable.get("langgraph_auth_user_id")
    return str(identity) if identity else None


def _optional(read: Callable[[], T]) -> T | None:
    """A component the host may not have started (NotStarted, e.g. a test's host): None."""
    try:
        return read()
    except RuntimeError:
        return None


class LeadAgentFactory:
    """``lead_agent``: builds the agent for a ``GraphRequest`` from the app's components.

    It is registered before the components start and only reads them when called (runs,
    state reads), so ``host`` is asked lazily; the circuit breakers are the factory's own."""

    def __init__(self, host: LeadAgentHost) -> None:
        self.host = host
        self.cache = GraphCache()
        self._deps: AgentDeps | None = None

    def deps(self) -> AgentDeps:
        if self._deps is None:
            pool = _optional(lambda: self.host.subagents)
            self._deps = AgentDeps(
                sandboxes=self.host.sandbox,
                data_dir=self.host.data_dir,
                # None: no task tool
                subagents=SubagentExtension(pool) if pool is not None else None,
                mcp=self.host.mcp,
                governance=self.host.governance,
                memory=_optional(lambda: self.host.memory),  # None: no memory
            )
        return self._deps

    async def __call__(self, request: GraphRequest) -> AgentGraph:
        settings = self.host.settings
        if request.app_config is not None and request.config_version is not None:
            config, version = request.app_config, request.config_version
        else:
            config, version = settings.current, settings.version
        options = AgentOptions.from_run(request.config, request.context)
        today = dt.date.today()
        identity = run_identity(request)
        skills: tuple[RunSkill, ...] = ()
        if identity is not None:  # the run's enabled skills are part of its prompt
            skills = await self.host.skills.for_run(identity, options.skills, config)
        key = (version, options.key(), today.isoformat(), skills)
        found = self.cache.get(key)
        if found is not None:
            return found
        # The live factory when the snapshot is the live config; else one for the snapshot.
        models = self.host.models if config is settings.current else ModelFactory(config)
        deps = self.deps()

        def build() -> AgentGraph:
            return build_lead_agent(
                deps, options, today=today, config=config, models=models, skills=skills
            )

        return await asyncio.to_thread(self.cache.get_or_build, key, build)
