"""DeerFlow's paths of the LangGraph API: `/api/threads/...` and `/api/runs/...`.

Pronghorn serves the LangGraph API under `/api/langgraph`. DeerFlow's gateway serves it at
`/api/threads/*` and `/api/runs/*` (its nginx maps `/api/langgraph/*` there), and some of
its calls use those paths directly. A request to one of them that no route of ours
answers by path and method (the thread files, message pages, feedback... are ours at those
very paths) is served by the LangGraph route: `/api/threads/{id}/state` is
`/api/langgraph/threads/{id}/state`.

It runs innermost (after authentication, rate limits and the guards, which all see the
path as sent) and only rewrites the path the router sees.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from pronghorn.gateway.openapi import API_ROOT

ALIASED = ("/api/threads", "/api/runs")


def _aliased(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in ALIASED)


class PathAliasMiddleware:
    """Serves `/api/threads/...` and `/api/runs/...` by the LangGraph routes when no
    route of ours answers that method at that path (`GET /api/threads/search` is our
    full-text search, `POST /api/threads/search` LangGraph's thread search)."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes  # the app's own list: routes added later are seen

    def _ours(self, scope: Scope) -> bool:
        for route in self.routes:
            if isinstance(route, Mount):  # the web UI at "/" would claim every path
                continue
            match, _ = route.matches(scope)
            if match is Match.FULL:  # path and method: ours with another method is theirs
                return True
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _aliased(scope["path"]) and not self._ours(scope):
            path = API_ROOT + scope["path"][len("/api") :]
            raw: bytes = scope.get("raw_path") or scope["path"].encode()
            raw = API_ROOT.encode() + raw[len(b"/api") :]
            scope = {**scope, "path": path, "raw_path": raw}
        await self.app(scope, receive, send)
