"""Adds sub-agents to a lead agent build: the ``task`` tool and its response guard."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import BaseTool

from pronghorn.agent.middlewares import CircuitBreakers
from pronghorn.agent.middlewares.folding import Middleware
from pronghorn.config.schema.app import AppConfig
from pronghorn.models.factory import ModelFactory
from pronghorn.subagents.limits import SubagentLimitMiddleware
from pronghorn.subagents.pool import SubagentPool
from pronghorn.subagents.runner import SubagentRunner
from pronghorn.subagents.tool import task_tool


@dataclass(frozen=True)
class SubagentExtension:
    """The app's sub-agents for a lead agent build (an ``agent.extensions.ToolExtension``):
    the graph factory passes it in ``AgentDeps.subagents``."""

    pool: SubagentPool  # the app's sub-agent limit

    def __call__(
        self,
        *,
        config: AppConfig,
        models: ModelFactory,
        parent_model: str,
        tools: Sequence[BaseTool],
        data_dir: Path,
        breakers: CircuitBreakers,
    ) -> tuple[BaseTool, Middleware]:
        """The ``task`` tool (its sub-agents pick from ``tools``) and the limit guard."""
        runner = SubagentRunner(
            config=config,
            models=models,
            parent_model=parent_model,
            tools=[t for t in tools if t.name != "task"],
            pool=self.pool,
            data_dir=data_dir,
            breakers=breakers,
        )
        cfg = config.subagents
        guard = SubagentLimitMiddleware(
            max_per_response=cfg.max_per_response, max_per_run=cfg.max_per_run
        )
        return task_tool(runner), guard
