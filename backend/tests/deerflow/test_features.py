"""`GET /api/features` (core/features/api.ts): every flag tells what this server does."""

from __future__ import annotations

from deerflow.conftest import StartApp
from deerflow.shapes import FEATURES, assert_shape


async def test_flags_follow_the_server(make_app: StartApp) -> None:
    app = await make_app(suggestions={"enabled": False})
    async with app.http("alice") as http:
        flags = (await http.get("/api/features")).json()
        assert_shape(flags, FEATURES)
        # /api/agents works, so DeerFlow must show its Agents page
        assert flags["agents_api"] == {"enabled": True}
        assert (await http.get("/api/agents")).status_code == 200
        # not built here: DeerFlow's live browser, its durable MCP background tasks
        assert flags["browser_control"] == {"enabled": False}
        assert flags["mcp_tasks"] == {"enabled": False}
        assert flags["suggestions"] == {"enabled": False}  # follows suggestions.enabled
        assert (await http.get("/api/suggestions/config")).json()["enabled"] is False
        assert flags["tool_approvals"] == {"enabled": True}
        assert flags["feedback"] == {"enabled": True}
    async with app.http(None) as http:
        assert (await http.get("/api/features")).status_code == 401
