"""Helpers for agent tests: a real ``create_agent`` graph with scripted models, small
real tools and an in-memory checkpointer (no server)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

from pronghorn.agent.builder import AgentParts, build_agent
from pronghorn.agent.options import AgentOptions
from pronghorn.config.schema.app import AgentConfig
from pronghorn.models import ScriptedChatModel
from support.scripted import scripted_model


def scripted(script: list[dict[str, Any]], **kw: Any) -> ScriptedChatModel:
    return scripted_model(script=script, **kw)


def make_agent(
    tmp_path: Path,
    model: Any,
    tools: Sequence[BaseTool] = (),
    *,
    options: AgentOptions | None = None,
    middleware: Sequence[Any] | None = None,
    internal_model: Any = None,
    sandboxes: Any = None,
    vision: bool = False,
    **agent_cfg: Any,
) -> Any:
    parts = AgentParts(
        model=model,
        model_name=getattr(model, "model_name", "scripted"),
        tools=list(tools),
        data_dir=tmp_path,
        agent_config=AgentConfig(**agent_cfg),
        sandboxes=sandboxes,
        internal_model=internal_model,
        retry_base_delay_s=0.01,
        vision=vision,
    )
    graph = build_agent(parts, options or AgentOptions(), middleware=middleware)
    return graph.copy(update={"checkpointer": InMemorySaver()})


def thread_config(thread_id: str | None = None, user_id: str = "tester") -> RunnableConfig:
    return {
        "configurable": {"thread_id": thread_id or str(uuid.uuid4()), "user_id": user_id},
        "recursion_limit": 60,
    }


def user(text: str) -> InputAgentState:
    return {"messages": [HumanMessage(content=text)]}
