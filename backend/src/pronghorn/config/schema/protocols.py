"""`protocols`: the agent protocols served beside the LangGraph API — MCP (assistants as
tools), A2A (assistants as agents) and the OpenAI-compatible chat endpoint."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _exposure_field(what: str) -> list[str]:
    return Field(
        default_factory=lambda: ["*"],
        description=(
            f"Which assistants {what}: assistant ids, graph ids or assistant names; '*' is "
            "every assistant whose graph takes messages. Each caller only ever sees the "
            "assistants it may read."
        ),
    )


class McpProtocolConfig(_Section):
    enabled: bool = Field(
        default=True, description="Serve the MCP endpoint at /api/langgraph/mcp/."
    )
    assistants: list[str] = _exposure_field("are MCP tools")
    stateless: bool = Field(
        default=False,
        description=(
            "Serve MCP without sessions (each POST stands alone; for replicas behind a "
            "load balancer without sticky sessions). With sessions (the default) a client's "
            "notifications/cancelled reaches the call it cancels; stateless, only closing "
            "the request cancels it (startup-only)."
        ),
    )


class A2aProtocolConfig(_Section):
    enabled: bool = Field(
        default=True, description="Serve A2A JSON-RPC at /api/langgraph/a2a/{assistant_id}."
    )
    assistants: list[str] = _exposure_field("answer A2A")


class OpenAIProtocolConfig(_Section):
    enabled: bool = Field(default=True, description="Serve /v1/chat/completions and /v1/models.")
    assistants: list[str] = _exposure_field("are OpenAI models")


class ProtocolsConfig(_Section):
    """Agent protocols; every call is authenticated and runs as an ordinary run of the
    caller (see docs/api.md, "Agent protocols")."""

    mcp: McpProtocolConfig = Field(default_factory=McpProtocolConfig)
    a2a: A2aProtocolConfig = Field(default_factory=A2aProtocolConfig)
    openai: OpenAIProtocolConfig = Field(default_factory=OpenAIProtocolConfig)
