"""Every endpoint that takes a body is covered by server.max_body_bytes: larger answers 413
before the route runs, whether Content-Length says so or the body streams in chunks.
(Uploads have their own limits, tested in tests/files/test_uploads.py.)"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator

from pronghorn.gateway.limits import UNCAPPED_PATHS
from support.inproc import InProcessServer

Start = Callable[..., InProcessServer]
LIMIT = 4096
FORM = "application/x-www-form-urlencoded"  # a form route reads its body only as a form


def body_routes(app: InProcessServer) -> list[tuple[str, str, str | None]]:
    """(method, concrete path, the media type of its declared body or None) of every
    POST/PUT/PATCH API operation."""
    out: list[tuple[str, str, str | None]] = []
    ident = str(uuid.uuid4())
    with app.http() as http:
        schema = http.get("/openapi.json").json()
    for template, operations in schema["paths"].items():
        path = re.sub(r"\{[^}]+\}", ident, template)
        for method, operation in sorted(operations.items()):
            if method.upper() in ("POST", "PUT", "PATCH") and not UNCAPPED_PATHS.match(path):
                content = operation.get("requestBody", {}).get("content") or {None: None}
                out.append((method.upper(), path, next(iter(content))))
    return out


def chunks(total: int, size: int = 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b" " * min(size, total - sent)
        sent += size


def test_every_body_endpoint_is_capped(start_app: Start) -> None:
    app = start_app(server={"max_body_bytes": LIMIT})
    routes = body_routes(app)
    assert sum(1 for *_, media_type in routes if media_type) > 30, routes  # the whole API
    oversized = b"[" + b" " * LIMIT + b"]"
    with app.http() as http:
        for method, path, media_type in routes:
            declared = http.request(
                method, path, content=oversized, headers={"content-type": "application/json"}
            )
            assert declared.status_code == 413, (method, path, declared.text)
            assert str(LIMIT) in declared.json()["detail"]
            if media_type is None:
                continue  # a streamed body it never reads is never held either
            streamed = http.request(
                method,
                path,
                content=chunks(LIMIT * 2),
                headers={"content-type": FORM if media_type == FORM else "application/json"},
            )
            assert streamed.status_code == 413, (method, path, "chunked", streamed.text)
        # nothing was created by any of them
        assert http.post("/api/langgraph/threads/search", json={}).json() == []
        assert http.post("/api/langgraph/assistants/search", json={"limit": 100}).status_code == 200


def test_a_body_under_the_cap_is_served(start_app: Start) -> None:
    app = start_app(server={"max_body_bytes": LIMIT})
    with app.http() as http:
        resp = http.post("/api/langgraph/threads", json={"metadata": {"pad": "x" * 1000}})
        assert resp.status_code == 200
