"""`mcp:`: the MCP servers whose tools the lead agent may call (docs/mcp.md)."""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from pronghorn.config.schema.oidc import check_endpoint_url

SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class McpOAuthConfig(_Section):
    """OAuth 2 token for an http/sse server: fetched from `token_url`, cached, refreshed
    `refresh_skew_s` before it expires, sent as `Authorization: <type> <token>`."""

    token_url: str = Field(description="The token endpoint (https, or http on loopback).")
    grant_type: Literal["client_credentials", "refresh_token"] = Field(
        default="client_credentials", description="The OAuth 2 grant used to get a token."
    )
    client_id: str | None = Field(default=None, description="The client id.")
    client_secret: SecretStr | None = Field(default=None, description="The client secret (${VAR}).")
    refresh_token: SecretStr | None = Field(
        default=None, description="The refresh token (grant_type refresh_token; ${VAR})."
    )
    scope: str | None = Field(default=None, description="Space-separated scopes to ask for.")
    audience: str | None = Field(default=None, description="The `audience` parameter, if any.")
    refresh_skew_s: float = Field(
        default=60.0, ge=0, description="Refresh the token this long before it expires."
    )
    timeout_s: float = Field(default=15.0, gt=0, description="Token request timeout.")

    @field_validator("token_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_endpoint_url(value)  # the client secret travels: https off loopback

    @model_validator(mode="after")
    def _grant(self) -> McpOAuthConfig:
        if self.grant_type == "refresh_token" and self.refresh_token is None:
            raise ValueError("grant_type refresh_token needs refresh_token")
        if self.grant_type == "client_credentials" and not self.client_id:
            raise ValueError("grant_type client_credentials needs client_id")
        return self


class McpServerConfig(_Section):
    """One MCP server: a command run over stdio, or a URL (streamable HTTP or SSE)."""

    type: Literal["stdio", "http", "sse"] = Field(
        default="stdio", description="stdio (a local command), http (streamable HTTP) or sse."
    )
    enabled: bool = Field(default=True, description="Offer this server's tools to the agent.")
    description: str = Field(default="", description="What the server is for (shown in the UI).")
    command: str | None = Field(default=None, description="stdio: the program to run.")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, SecretStr] = Field(
        default_factory=dict,
        description=(
            "stdio: extra environment variables (use ${VAR}); the process gets only these "
            "plus PATH, HOME (its working directory), LANG, TMPDIR and the mcp SDK's safe "
            "list (SHELL, TERM, USER, LOGNAME), never the rest of the gateway's environment."
        ),
    )
    url: str | None = Field(default=None, description="http/sse: the server's endpoint URL.")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="http/sse: extra request headers (use ${VAR})."
    )
    oauth: McpOAuthConfig | None = Field(
        default=None, description="http/sse: get a bearer token with OAuth 2."
    )
    tool_call_timeout_s: float = Field(
        default=60.0, gt=0, description="Longest a tool call may take before it fails."
    )
    startup_timeout_s: float = Field(
        default=30.0, gt=0, description="Longest to connect and initialize a session."
    )

    @model_validator(mode="after")
    def _transport(self) -> McpServerConfig:
        if self.type == "stdio":
            if not self.command:
                raise ValueError("a stdio server needs command")
            if self.url or self.headers or self.oauth:
                raise ValueError("url, headers and oauth are for http/sse servers")
        else:
            if not self.url:
                raise ValueError(f"a {self.type} server needs url")
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"url {self.url!r} is not an http(s) URL")
            if self.command or self.args or self.env:
                raise ValueError("command, args and env are for stdio servers")
        return self


class McpConfig(_Section):
    """MCP servers and how their tools reach the agent (hot-reloaded)."""

    servers: dict[str, McpServerConfig] = Field(
        default_factory=dict, description="Servers by name (letters, digits, _ and -)."
    )
    tool_name_prefix: bool = Field(
        default=True,
        description="Name tools `<server>_<tool>` (false: the tool's own name, first wins).",
    )
    tool_search_threshold: int = Field(
        default=30,
        ge=0,
        description=(
            "With more MCP tools than this, they are hidden behind a `tool_search` tool and "
            "promoted per thread as the model finds them (0: always defer)."
        ),
    )
    max_stdio_sessions: int = Field(
        default=32,
        ge=1,
        le=1024,
        description=(
            "stdio servers run one process per (server, user, thread); the least recently "
            "used is stopped beyond this many."
        ),
    )

    api_stdio_commands: list[str] = Field(
        default_factory=lambda: ["npx", "uvx"],
        description=(
            "Programs a stdio server added or changed through the API (PUT /api/mcp/config, "
            "POST /api/mcp/test) may run, by name or full path as written; '*' allows any. "
            "Servers written in the file by hand are not limited, and unchanged ones are kept "
            "as they are."
        ),
    )

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in servers:
            if not SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"server name {name!r}: use letters, digits, _ and - (up to 64, "
                    "starting with a letter or digit)"
                )
        return servers
