"""The MCP client: servers from `mcp.servers`, their tools for the lead agent (docs/mcp.md).

`McpManager` (server_manager.py) is the one long-lived owner: it discovers tool schemas in the
background, pools sessions (sessions.py) and is hot-reloaded; `McpToolsMiddleware`
(middleware.py) puts the tools in front of the model at call time.
"""
