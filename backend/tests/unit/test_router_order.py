"""The routers registered first (for the speed of the runs' hot paths) take no request
another router would have taken: none of their routes shares a path with another's, so
the registration order decides no route's precedence."""

from __future__ import annotations

import re

from starlette.routing import BaseRoute, compile_path

from pronghorn.gateway.routers import FIRST, REST


def _paths(routes: list[BaseRoute]) -> list[str]:
    return [path for route in routes if isinstance(path := getattr(route, "path", None), str)]


def _sample(path: str) -> str:
    """A concrete path the template matches: every parameter becomes one segment."""
    return re.sub(r"\{[^}]+\}", "x0", path)


def _overlap(a: str, b: str) -> bool:
    return bool(compile_path(a)[0].match(_sample(b)) or compile_path(b)[0].match(_sample(a)))


def test_first_routers_share_no_path_with_the_rest() -> None:
    first = [(m.__name__, p) for m in FIRST for p in _paths(m.router.routes)]
    rest = [(m.__name__, p) for m in REST for p in _paths(m.router.routes)]
    assert first and rest
    clashes = [(f, r) for f in first for r in rest if _overlap(f[1], r[1])]
    assert clashes == []


def test_the_overlap_check_sees_a_clash() -> None:
    assert _overlap("/api/langgraph/runs/crons", "/api/langgraph/runs/{run_id}")
    assert not _overlap("/api/langgraph/runs/{run_id}", "/api/langgraph/threads/{thread_id}")
