"""DeerFlow's custom agents (`/api/agents`), a view over lead_agent assistants."""

from __future__ import annotations

from pydantic import BaseModel


class Agent(BaseModel):
    name: str  # only assistants with an agent_name are agents
    description: str
    model: str | None
    tool_groups: list[str] | None
    skills: list[str] | None
    mcp_servers: list[str] | None
    subagent_enabled: bool
    system_prompt: str | None
    soul: str | None
    assistant_id: str
    version: int | None
    created_at: str | None
    updated_at: str | None


class AgentList(BaseModel):
    agents: list[Agent]


class AgentNameCheck(BaseModel):
    available: bool
    name: str
