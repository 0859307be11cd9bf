"""``GraphRequest``: why a graph is wanted, and for which run.

Every access to a graph goes through the registry with one of these, so a graph factory can
be handed exactly what the reference server hands it: the run's ``RunnableConfig``, or a
``langgraph_sdk.runtime.ServerRuntime`` built from the access context, the user, the store
and (for runs) the run's context. Built-in graphs also get the config snapshot the run was
accepted under.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from langchain_core.runnables import RunnableConfig
from langgraph_sdk.auth.types import BaseUser
from langgraph_sdk.runtime import AccessContext

from pronghorn.config.schema.app import AppConfig

__all__ = ["AccessContext", "GraphRequest"]


@dataclass(frozen=True, kw_only=True)
class GraphRequest:
    """What the registry knows about one access to a graph."""

    access: AccessContext
    """`threads.create_run` (a run executes), `threads.update` (update_state),
    `threads.read` (state, history) or `assistants.read` (graph, schemas, subgraphs)."""

    config: RunnableConfig = field(default_factory=lambda: RunnableConfig())
    """The run's config (assistant + run config + injected ids), or a config addressing the
    thread / assistant for the other accesses."""

    context: Mapping[str, object] | None = None
    """The run's context (`threads.create_run` only): the caller's JSON object."""

    user: BaseUser | None = None
    """The authenticated user; None while no authentication is configured (as the
    reference server without custom auth)."""

    app_config: AppConfig | None = None
    """The config snapshot the run was accepted under (None: the live config)."""

    config_version: str | None = None
    """The content hash of ``app_config`` (None with it)."""

    @property
    def executes(self) -> bool:
        return self.access == "threads.create_run"
