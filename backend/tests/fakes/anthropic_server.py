"""A real local HTTP server speaking Anthropic's Messages API (``POST /v1/messages``).

Same shape as :mod:`fakes.openai_server` (and the same lifecycle): queue replies, point
``ChatAnthropic(base_url=server.base_url)`` at it, assert on ``server.requests``.

    with FakeAnthropicServer() as server:
        server.queue(AnthropicReply.error(429), AnthropicReply.text("hello"))

Replies: text, one tool call (``tool_use`` with its JSON input streamed in pieces), or an
HTTP error with Anthropic's error body. Streams (``"stream": true``) use Anthropic's SSE
events (``message_start`` … ``message_stop``); other requests get one JSON message.
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Self

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from fakes.openai_server import FakeOpenAIServer, RecordedRequest
from support.connection_close import ConnectionClose

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class AnthropicReply:
    text: str = ""
    tool_call: dict[str, Any] | None = None  # {"name", "args", "id"}
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def error(cls, status: int, **kw: Any) -> AnthropicReply:
        headers = kw.pop("headers", {})
        headers.setdefault("retry-after-ms", "10")  # keep back-off short in tests
        return cls(status=status, headers=headers, **kw)

    @classmethod
    def tool(cls, name: str, args: dict[str, Any], *, id: str = "toolu_1") -> AnthropicReply:
        return cls(tool_call={"name": name, "args": args, "id": id})


def _blocks(reply: AnthropicReply) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if reply.text:
        out.append({"type": "text", "text": reply.text})
    if reply.tool_call:
        c = reply.tool_call
        out.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]})
    return out


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


class FakeAnthropicServer(FakeOpenAIServer):
    """``POST /v1/messages`` on 127.0.0.1 (lifecycle shared with the OpenAI fake)."""

    def __init__(self, *, default: AnthropicReply | None = None) -> None:
        super().__init__()
        self.replies: deque[AnthropicReply] = deque()  # type: ignore[assignment]
        self.default = default  # type: ignore[assignment]

    def queue(self, *replies: AnthropicReply) -> Self:  # type: ignore[override]
        """Queue Anthropic replies (the OpenAI fake's ``queue`` takes its own kind)."""
        with self._lock:
            self.replies.extend(replies)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _app(self) -> Starlette:
        return Starlette(
            routes=[Route("/v1/messages", self._messages, methods=["POST"])],
            middleware=[Middleware(ConnectionClose)],
        )

    async def _messages(self, request: Request) -> Response:
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(RecordedRequest(request.method, request.url.path, headers, body))
        reply: AnthropicReply | None = self._next_reply()  # type: ignore[assignment]
        if reply is None:
            reply = AnthropicReply(status=500)
        if reply.status != 200:
            kind = _ERROR_TYPES.get(reply.status, "api_error")
            error = {"type": kind, "message": f"fake error {reply.status}"}
            return JSONResponse(
                {"type": "error", "error": error}, status_code=reply.status, headers=reply.headers
            )
        stop = "tool_use" if reply.tool_call else "end_turn"
        message = {
            "id": f"msg_{uuid.uuid4().hex[:12]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake-claude"),
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            full = {**message, "content": _blocks(reply), "stop_reason": stop}
            return JSONResponse(full)
        return StreamingResponse(self._stream(message, reply, stop), media_type="text/event-stream")

    async def _stream(
        self, message: dict[str, Any], reply: AnthropicReply, stop: str
    ) -> AsyncIterator[bytes]:
        yield _sse("message_start", {"message": {**message, "content": []}})
        for index, block in enumerate(_blocks(reply)):
            if block["type"] == "text":
                yield _sse(
                    "content_block_start", {"index": index, "content_block": {**block, "text": ""}}
                )
                words = block["text"].split(" ")
                for n, word in enumerate(words):
                    piece = word if n == len(words) - 1 else word + " "
                    delta = {"type": "text_delta", "text": piece}
                    yield _sse("content_block_delta", {"index": index, "delta": delta})
            else:
                yield _sse(
                    "content_block_start", {"index": index, "content_block": {**block, "input": {}}}
                )
                raw = json.dumps(block["input"])
                for i in range(0, len(raw), 8):
                    delta = {"type": "input_json_delta", "partial_json": raw[i : i + 8]}
                    yield _sse("content_block_delta", {"index": index, "delta": delta})
            yield _sse("content_block_stop", {"index": index})
        delta = {
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        }
        yield _sse("message_delta", delta)
        yield _sse("message_stop", {})
