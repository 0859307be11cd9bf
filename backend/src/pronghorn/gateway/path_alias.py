"""DeerFlow's paths of the LangGraph API: `/api/threads/...` and `/api/runs/...`.

Pronghorn serves the LangGraph API under `/api/langgraph`. DeerFlow's gateway serves it at
`/api/threads/*` and `/api/runs/*` (its nginx maps `/api/langgraph/*` there), and some of
its calls use those paths directly. A request to one of them that no route of ours
answers (the thread files, message pages, feedback... are ours at those very paths) is
served by the LangGraph route: `/api/threads/{id}/state` is `/api/langgraph/threads/{id}/state`.
A path of ours asked with a method only the LangGraph route has goes there too
(`POST /api/threads/search`, while `GET /api/threads/search` is ours).

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
    route of ours has that path."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes  # the app's own list: routes added later are seen

    def _match(self, scope: Scope) -> Match:
        """How well our routes (the web UI's catch-all mount aside) take this request."""
        best = Match.NONE
        for route in self.routes:
            if isinstance(route, Mount):  # the web UI at "/" would claim every path
                continue
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return match
            if match is Match.PARTIAL:
                best = match
        return best

    def _aliased_scope(self, scope: Scope) -> Scope:
        path = API_ROOT + scope["path"][len("/api") :]
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        raw = API_ROOT.encode() + raw[len(b"/api") :]
        return {**scope, "path": path, "raw_path": raw}

    def _route(self, scope: Scope) -> Scope:
        """Ours when a route of ours takes the path and method; the LangGraph route when
        it does and ours only has the path under another method (`GET /api/threads/search`
        is our text search, `POST` is LangGraph's thread search); else as sent."""
        ours = self._match(scope)
        if ours is Match.FULL:
            return scope
        aliased = self._aliased_scope(scope)
        if ours is Match.NONE or self._match(aliased) is Match.FULL:
            return aliased
        return scope  # our path, a method nobody serves: our 405

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _aliased(scope["path"]):
            scope = self._route(scope)
        await self.app(scope, receive, send)
