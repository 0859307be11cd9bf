"""`X-Request-ID`: the client's is echoed; otherwise each request gets an id of its own."""

from __future__ import annotations

import re
from typing import Any

from pronghorn.gateway.middleware import RequestIdMiddleware
from pronghorn.runtime.observability.log_context import request_id_var


async def answer_id(middleware: RequestIdMiddleware, headers: list[tuple[bytes, bytes]]) -> str:
    head: dict[bytes, bytes] = {}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            head.update(message["headers"])

    await middleware({"type": "http", "headers": headers}, receive, send)
    return head[b"x-request-id"].decode()


async def test_made_ids_differ_and_are_in_the_log_context() -> None:
    seen: list[str | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(request_id_var.get())
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    middleware = RequestIdMiddleware(app)
    ids = [await answer_id(middleware, []) for _ in range(3)]
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert seen == ids
    assert await answer_id(middleware, [(b"x-request-id", b"abc-1")]) == "abc-1"
    # another process (another middleware) makes other ids
    assert await answer_id(RequestIdMiddleware(app), []) not in ids
