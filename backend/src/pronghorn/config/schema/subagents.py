"""``subagents``: the ``task`` tool's sub-agent types and limits (docs/agent.md, "Sub-agents")."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TYPE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class SubagentTypeConfig(BaseModel):
    """One sub-agent type: what the lead agent delegates to with ``task(subagent_type=...)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(
        default="",
        max_length=1000,
        description="When to use this type (shown to the lead agent in the task tool).",
    )
    system_prompt: str = Field(
        default="", max_length=20000, description="Instructions of the sub-agent."
    )
    tools: list[str] | None = Field(
        default=None,
        description="Tool names it may use; null: every tool of the lead agent except task, "
        "ask_clarification and present_files.",
    )
    skills: list[str] | None = Field(
        default=None, description="Skills it may use (allow-list); null: all enabled."
    )
    model: str = Field(
        default="inherit", description="Model name, or 'inherit' for the lead agent's model."
    )
    max_turns: int | None = Field(
        default=None, ge=1, le=500, description="Model calls before it is stopped; null: default."
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=86400, description="Wall-clock limit; null: subagents.timeout_s."
    )


class SubagentsConfig(BaseModel):
    """Sub-agents the lead agent can delegate to with the `task` tool (when a run sets
    `context.subagent_enabled`, or its assistant does; see docs/agent.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_per_response: int = Field(
        default=3,
        ge=1,
        le=10,
        description="task calls one model response may make; excess calls are dropped with a "
        "visible note.",
    )
    max_per_run: int = Field(
        default=6, ge=1, le=50, description="task calls one run may make in total."
    )
    max_concurrent: int = Field(
        default=8,
        ge=1,
        le=256,
        description="Sub-agents running at once in the whole process; more wait for a slot.",
    )
    timeout_s: float = Field(
        default=900.0, gt=0, le=86400, description="Default wall-clock limit of one sub-agent."
    )
    max_turns: int = Field(
        default=50, ge=1, le=500, description="Default model calls of one sub-agent."
    )
    types: dict[str, SubagentTypeConfig] = Field(
        default_factory=dict,
        description="Custom types by name (description, system_prompt, tools, skills, "
        "model|inherit, max_turns, timeout_s); a built-in name (general-purpose, bash) "
        "overrides that type's fields.",
    )

    @field_validator("types")
    @classmethod
    def _names(cls, types: dict[str, SubagentTypeConfig]) -> dict[str, SubagentTypeConfig]:
        for name in types:
            if not TYPE_NAME.match(name):
                raise ValueError(
                    f"subagent type name {name!r}: use lowercase letters, digits, '-' or '_'"
                )
        return types

    @model_validator(mode="after")
    def _per_response_within_run(self) -> SubagentsConfig:
        if self.max_per_response > self.max_per_run:
            raise ValueError("subagents.max_per_response cannot exceed subagents.max_per_run")
        return self
