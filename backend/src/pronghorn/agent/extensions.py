"""``ToolExtension``: a tool and its response guard that a caller adds to a lead agent build.

The sub-agents' ``task`` tool is one (``pronghorn.subagents.SubagentExtension``). It is
passed in through ``AgentDeps`` so this package never imports the ones above it that build
on its middlewares and state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from langchain_core.tools import BaseTool

from pronghorn.agent.middlewares import CircuitBreakers
from pronghorn.agent.middlewares.folding import Middleware
from pronghorn.config.schema.app import AppConfig
from pronghorn.models.factory import ModelFactory


class ToolExtension(Protocol):
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
        """The tool (it may use the agent's ``tools``) and its guard, for one build."""
        ...
