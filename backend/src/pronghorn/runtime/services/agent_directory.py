"""The user's custom agents, as sub-agent types: assistants of ``lead_agent`` (the user's
own, or shared system ones) whose ``context.agent_name`` names them (agent-context.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pronghorn.persistence.db import Database
from pronghorn.persistence.repos import assistants as repo
from pronghorn.persistence.repos.common import OwnerScope
from pronghorn.subagents import CustomAgent

GRAPH_ID = "lead_agent"
MAX_SCANNED = 1000


def _names(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list | tuple):
        return None
    return tuple(str(v) for v in cast("list[object] | tuple[object, ...]", value))


def custom_agent(context: Mapping[str, object], description: str | None) -> CustomAgent:
    model = context.get("model_name")
    return CustomAgent(
        name=str(context["agent_name"]),
        description=str(context.get("description") or description or ""),
        system_prompt=str(context.get("system_prompt") or ""),
        model_name=str(model) if model else None,
        tool_groups=_names(context.get("tool_groups")),
        skills=_names(context.get("skills")),
    )


class AssistantAgentDirectory:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def find(self, owner_id: str, name: str) -> CustomAgent | None:
        rows, _ = await self.db.read(
            lambda conn: repo.search(
                conn, graph_id=GRAPH_ID, limit=MAX_SCANNED, scope=OwnerScope(owner_id=owner_id)
            )
        )
        for row in rows:
            context = dict(row.context)
            if context.get("agent_name") == name:
                return custom_agent(context, row.description)
        return None
