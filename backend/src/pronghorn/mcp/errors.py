"""The MCP client's domain errors (the gateway maps them to HTTP, the agent to tool errors)."""

from __future__ import annotations


class McpError(Exception):
    """Base of every MCP client error."""


class McpUnavailable(McpError):
    """A server could not be started, reached or initialized (its tools are unavailable)."""


class McpToolError(McpError):
    """A tool call failed: timed out, the server went away, or it was refused."""


class McpAuthError(McpUnavailable):
    """The OAuth token could not be obtained."""


class McpConfigError(McpError):
    """An MCP config update is invalid, or the config file cannot be written."""
