"""The A2A protocol's bodies: the agent card and JSON-RPC envelopes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class AgentInterface(BaseModel):
    url: str
    protocolBinding: str
    protocolVersion: str


class AgentCard(_Open):
    """The A2A 0.3 agent card (camelCase), plus `supportedInterfaces` for 1.x clients."""

    name: str
    description: str
    url: str
    version: str
    protocolVersion: str
    capabilities: dict[str, object]
    defaultInputModes: list[str]
    defaultOutputModes: list[str]
    skills: list[dict[str, object]]
    supportedInterfaces: list[AgentInterface]


class JsonRpcRequest(_Open):
    jsonrpc: Literal["2.0"]
    id: str | int | None = None
    method: str
    params: dict[str, object] | None = None


class JsonRpcErrorDetail(_Open):
    code: int
    message: str


class JsonRpcResponse(BaseModel):
    """A result (`result`: a task or message) or an error (`error`)."""

    jsonrpc: Literal["2.0"]
    id: str | int | None
    result: dict[str, object] | None = None
    error: JsonRpcErrorDetail | None = None


CARD_ERRORS: dict[int | str, dict[str, object]] = {
    404: {
        "description": "No such assistant, or A2A is disabled",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
    }
}

RPC_ANSWERS: dict[int | str, dict[str, object]] = {
    200: {
        "model": JsonRpcResponse,
        "description": "A JSON-RPC answer; `message/stream` answers server-sent events",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    **{
        status: {"model": JsonRpcResponse, "description": "A JSON-RPC error"}
        for status in (400, 401, 403, 404, 409, 413, 422, 429, 503)
    },
}
