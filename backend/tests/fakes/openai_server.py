"""A real local HTTP server speaking the OpenAI chat-completions wire protocol.

It runs a small Starlette app under uvicorn in a background thread, on a free port of
127.0.0.1. Tests queue the replies it should give, point a client at ``server.base_url``,
then assert on ``server.requests`` (method, path, headers, JSON body).

    with FakeOpenAIServer() as server:
        server.queue(Reply.error(429), Reply.text("hello world"))
        ...  # ChatOpenAI(base_url=server.base_url, api_key="sk-test", ...)
        assert server.requests[0].headers["authorization"] == "Bearer sk-test"

Replies: plain text (streamed word by word when the request asks for ``stream``), tool calls
(arguments streamed in pieces), HTTP errors (429 / 500 / 401 / anything) with an OpenAI
error body, and a stream that is dropped after some chunks. The usage chunk is sent last
when the request sets ``stream_options.include_usage``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
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

from support.connection_close import ConnectionClose
from support.threaded_server import ThreadedServer

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


@dataclass
class Reply:
    """One programmed answer of the fake server."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    status: int = 200
    error_message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop_after_chunks: int | None = None
    chunk_delay_s: float = 0.0

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def tool_call(cls, name: str, args: dict[str, Any], *, id: str | None = None, **kw: Any):
        call = {"name": name, "args": args, "id": id or f"call_{uuid.uuid4().hex[:16]}"}
        return cls(tool_calls=[call], **kw)

    @classmethod
    def error(cls, status: int, message: str | None = None, **kw: Any) -> Reply:
        headers = kw.pop("headers", {})
        if status == 429:
            # Keep client back-off short in tests (the openai SDK honours this header).
            headers.setdefault("retry-after-ms", "20")
        return cls(status=status, error_message=message, headers=headers, **kw)

    @classmethod
    def dropped(cls, text: str, after_chunks: int = 2) -> Reply:
        """A streamed text whose connection is cut after ``after_chunks`` chunks."""
        return cls(content=text, drop_after_chunks=after_chunks)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class _StreamDropped(Exception):
    """Raised inside the response body generator to cut the connection mid-stream."""


def _words(text: str) -> list[str]:
    return [p for p in re.split(r"(?<=\s)(?=\S)", text) if p]


def _pieces(s: str, size: int = 7) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


class FakeOpenAIServer:
    """OpenAI-compatible ``/v1/chat/completions`` (and ``/v1/models``) on 127.0.0.1."""

    def __init__(self, *, default: Reply | None = None) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.default = default
        self._lock = threading.Lock()
        self._http: ThreadedServer | None = None
        self.port = 0

    # -- programming -------------------------------------------------------------------
    def queue(self, *replies: Reply) -> Self:
        with self._lock:
            self.replies.extend(replies)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _next_reply(self) -> Reply | None:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
            return self.default

    # -- ASGI app ----------------------------------------------------------------------
    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ],
            middleware=[Middleware(ConnectionClose)],
        )

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.url.path,
                headers={k.lower(): v for k, v in request.headers.items()},
                body=body,
            )
        )
        reply = self._next_reply()
        if reply is None:
            return JSONResponse(
                {"error": {"message": "fake server: no reply queued", "type": "server_error"}},
                status_code=500,
            )
        if reply.status != 200:
            kind, code = _ERROR_TYPES.get(reply.status, ("server_error", None))
            message = reply.error_message or f"fake error {reply.status}"
            return JSONResponse(
                {"error": {"message": message, "type": kind, "code": code, "param": None}},
                status_code=reply.status,
                headers=reply.headers,
            )
        model = body.get("model", "fake-model")
        usage = reply.usage or _usage(body, reply)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(
                self._sse(reply, model, usage if include_usage else None),
                media_type="text/event-stream",
                headers=reply.headers,
            )
        return JSONResponse(_completion(reply, model, usage), headers=reply.headers)

    async def _sse(
        self, reply: Reply, model: str, usage: dict[str, int] | None
    ) -> AsyncIterator[bytes]:
        cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        chunks: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        if reply.reasoning:
            chunks += [chunk({"reasoning_content": w}) for w in _words(reply.reasoning)]
        chunks += [chunk({"content": w}) for w in _words(reply.content)]
        for i, call in enumerate(reply.tool_calls):
            head = {
                "index": i,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            chunks.append(chunk({"tool_calls": [head]}))
            for piece in _pieces(json.dumps(call["args"])):
                delta = {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                chunks.append(chunk(delta))
        chunks.append(chunk({}, _finish(reply)))
        if usage is not None:
            chunks.append(
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
        for n, c in enumerate(chunks):
            if reply.drop_after_chunks is not None and n >= reply.drop_after_chunks:
                raise _StreamDropped("fake server dropped the stream")
            yield f"data: {json.dumps(c)}\n\n".encode()
            if reply.chunk_delay_s:
                await asyncio.sleep(reply.chunk_delay_s)
        yield b"data: [DONE]\n\n"

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> Self:
        self._http = ThreadedServer(self._app(), lifespan="off", name="fake OpenAI server").start()
        self.port = self._http.port
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _finish(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = sum(len(json.dumps(m.get("content") or "")) // 4 + 4 for m in body.get("messages", []))
    out = (len(reply.content) + len(json.dumps([c["args"] for c in reply.tool_calls]))) // 4 + 1
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}


def _completion(reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
        "usage": usage,
    }
