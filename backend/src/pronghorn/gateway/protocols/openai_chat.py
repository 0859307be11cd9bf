"""The OpenAI chat-completions API over the assistants: `/v1/chat/completions`, `/v1/models`.

`model` names an assistant (its id, its graph id or its name), optionally with the lead
agent's model after a colon (`lead_agent:gpt-4o`). Each request is an ordinary run of the
caller. Without a thread every request starts a new thread with all its `messages`; with
one — the `X-Pronghorn-Thread-Id` header, or the `user` field (a conversation key private
to the caller) — the thread keeps the history and only the messages after the last
assistant message are sent. Answers carry the thread in `X-Pronghorn-Thread-Id`.

`stream: true` streams the answer's real token deltas as `chat.completion.chunk` events
and ends with `data: [DONE]`; usage comes as a last chunk when
`stream_options.include_usage` is set (and always in a non-streamed answer). Tool activity
is not streamed (its text is not the answer). Errors are OpenAI-shaped.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Literal

import orjson
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import Response, StreamingResponse

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.models.bodies import json_body
from pronghorn.gateway.models.openai import (
    CHAT_ANSWERS,
    ChatCompletion,
    ModelObject,
    ModelObjectList,
    openai_errors,
)
from pronghorn.gateway.protocols.openai_errors import OpenAIError, error_body
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.errors import DomainError, NotFound
from pronghorn.runtime.services import agent_calls as calls
from pronghorn.runtime.services import agent_output as output
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/v1", tags=["openai"])

THREAD_HEADER = "X-Pronghorn-Thread-Id"
RUN_HEADER = "X-Pronghorn-Run-Id"


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, object]] | None = None
    name: str | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: bool = False


class ChatRequest(BaseModel):
    """The fields we honour; the others OpenAI defines (temperature, …) are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = Field(default=None, max_length=256)
    n: int = Field(default=1, ge=1, le=1)


def _enabled(runtime: AppRuntime) -> None:
    if not runtime.config.protocols.openai.enabled:
        raise OpenAIError(404, "The OpenAI-compatible API is disabled (protocols.openai)")


async def _parse(request: Request) -> ChatRequest:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        raise OpenAIError(400, "The request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise OpenAIError(400, "The request body must be a JSON object")
    try:
        return ChatRequest.model_validate(body)
    except ValidationError as exc:
        err = exc.errors()[0]
        param = ".".join(str(p) for p in err.get("loc", ()))
        raise OpenAIError(400, f"{param}: {err.get('msg')}", param=param or None) from None


async def _resolve_model(
    runtime: AppRuntime, access: Access, model: str
) -> tuple[calls.Callee, str | None]:
    """The assistant `model` names, and the lead agent's model after a colon, if any (an
    assistant whose own name has a colon wins)."""
    exposure = runtime.config.protocols.openai.assistants
    try:
        return await calls.find_callee(runtime, access, model, exposure), None
    except NotFound:
        ref, sep, model_name = model.rpartition(":")
        if not sep or not ref or not model_name:
            raise
    callee = await calls.find_callee(runtime, access, ref, exposure)
    if model_name not in {m.name for m in runtime.config.models}:
        raise OpenAIError(
            404, f"Model {model_name!r} is not configured", code="model_not_found", param="model"
        )
    return callee, model_name


def _thread(request: Request, body: ChatRequest, access: Access) -> str | None:
    given = request.headers.get(THREAD_HEADER.lower())
    if given:
        try:
            return str(uuid.UUID(given))
        except ValueError:
            raise OpenAIError(
                400, f"{THREAD_HEADER} must be a thread UUID", param=THREAD_HEADER
            ) from None
    if body.user:
        return calls.thread_for(access, f"openai:{body.user}")
    return None


def _content(message: ChatMessage) -> str | list[dict[str, object]]:
    if message.content is None:
        return ""
    return message.content


def _input(body: ChatRequest, continuing: bool) -> dict[str, object]:
    messages = body.messages
    if continuing:  # the thread has the history: only what came after the last answer
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        messages = messages[last + 1 :]
        if not messages:
            raise OpenAIError(400, "No new message after the last assistant message")
    out: list[dict[str, object]] = []
    for m in messages:
        if m.role == "tool":
            raise OpenAIError(400, "Tool messages are not accepted: the agent runs its own tools")
        role = "system" if m.role == "developer" else m.role
        out.append({"role": role, "content": _content(m)})
    return {"messages": out}


def _usage(usage: dict[str, int]) -> dict[str, int]:
    prompt = usage.get("input_tokens", 0)
    completion = usage.get("output_tokens", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": usage.get("total_tokens") or prompt + completion,
    }


def _answer(job: Job) -> str:
    failed = output.error_of(job.output)
    if failed is not None:
        raise OpenAIError(502, f"The assistant's run failed: {failed}", code="run_failed")
    if job.status == "interrupted":
        raise OpenAIError(409, "The run was cancelled before it answered", code="run_cancelled")
    text = output.last_answer(job.output)
    waiting = output.interrupts_of(job.output)
    if waiting:
        question = waiting[0]
        asked = question if isinstance(question, str) else orjson.dumps(question).decode()
        return f"{text}\n\n{asked}".strip() if text else asked
    return text


async def _start(request: Request, runtime: AppRuntime, access: Access) -> tuple[ChatRequest, Job]:
    _enabled(runtime)
    body = await _parse(request)
    modes = ("messages-tuple",) if body.stream else ("values",)
    thread_id = _thread(request, body, access)
    try:
        callee, model_name = await _resolve_model(runtime, access, body.model)
        continuing = False
        if thread_id is not None:
            continuing = bool(await calls.thread_runs(runtime, thread_id, limit=1))
        job = await calls.start_call(
            runtime,
            access,
            callee,
            thread_id=thread_id,
            graph_input=_input(body, continuing),
            model_name=model_name,
            modes=modes,
            metadata={"protocol": "openai"},
        )
    except DomainError as exc:
        raise OpenAIError.of(exc) from None
    return body, job


def _headers(job: Job) -> dict[str, str]:
    return {THREAD_HEADER: job.thread_id, RUN_HEADER: job.run_id}


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses=CHAT_ANSWERS,
    openapi_extra=json_body(ChatRequest),
)
async def chat_completions(
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    try:
        body, job = await _start(request, runtime, access)
    except OpenAIError as exc:
        return exc.response()
    created = int(time.time())
    completion_id = f"chatcmpl-{job.run_id}"
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        chunks = _stream(runtime, job, body.model, completion_id, created, include_usage)
        return StreamingResponse(
            chunks,
            media_type="text/event-stream",
            headers={**_headers(job), "Cache-Control": "no-store"},
        )
    if not await _answered_before_gone(request, job):
        calls.cancel_soon(runtime, job)  # the client went away: nobody wants the answer
        return Response(status_code=499)
    try:
        text = _answer(job)
    except OpenAIError as exc:
        return exc.response(_headers(job))
    usage = _usage(await calls.usage_of(runtime, job))
    return JSONResponse(
        {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": body.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": usage,
        },
        headers=_headers(job),
    )


async def _answered_before_gone(request: Request, job: Job) -> bool:
    """Wait for the run; False if the client disconnected first."""

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    done = asyncio.ensure_future(job.done.wait())
    left = asyncio.ensure_future(gone())
    try:
        await asyncio.wait((done, left), return_when=asyncio.FIRST_COMPLETED)
        return done.done()
    finally:
        for task in (done, left):
            task.cancel()
        await asyncio.gather(done, left, return_exceptions=True)


def _sse(obj: dict[str, object]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


async def _stream(
    runtime: AppRuntime,
    job: Job,
    model: str,
    completion_id: str,
    created: int,
    include_usage: bool,
) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
                ],
            }
        )

    finished = False
    try:
        yield chunk({"role": "assistant", "content": ""})
        streamed = False
        async for event in calls.events(runtime, job):
            token = output.token_of(event)
            if token:
                streamed = True
                yield chunk({"content": token})
        await job.done.wait()
        try:
            text = _answer(job)
        except OpenAIError as exc:
            finished = True
            yield _sse(exc.body())
            yield b"data: [DONE]\n\n"
            return
        if not streamed and text:  # a graph that does not stream its messages
            yield chunk({"content": text})
        yield chunk({}, "stop")
        if include_usage:
            usage = _usage(await calls.usage_of(runtime, job))
            yield _sse(
                {
                    "id": completion_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
        finished = True
        yield b"data: [DONE]\n\n"
    finally:
        if not finished:  # the client went away mid-answer
            calls.cancel_soon(runtime, job)


def _model_entry(model_id: str, created: int) -> dict[str, object]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": "pronghorn"}


async def _models(runtime: AppRuntime, access: Access) -> list[dict[str, object]]:
    callees = await calls.list_callees(runtime, access, runtime.config.protocols.openai.assistants)
    out: list[dict[str, object]] = []
    names = [m.name for m in runtime.config.models]
    for callee in callees:
        base = callee.graph_id if callee.is_system else callee.assistant_id
        created = _epoch(callee.assistant.get("created_at"))
        out.append(_model_entry(base, created))
        if callee.graph_id == "lead_agent":
            out.extend(_model_entry(f"{base}:{name}", created) for name in names)
    return out


def _epoch(value: object) -> int:
    try:
        return int(datetime.fromisoformat(str(value)).timestamp())
    except ValueError:
        return 0


@router.get("/models", response_model=ModelObjectList, responses=openai_errors(401, 404, 429))
async def list_models(
    runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    try:
        _enabled(runtime)
        return JSONResponse({"object": "list", "data": await _models(runtime, access)})
    except OpenAIError as exc:
        return exc.response()


@router.get(
    "/models/{model_id:path}", response_model=ModelObject, responses=openai_errors(401, 404, 429)
)
async def get_model(
    model_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> Response:
    try:
        _enabled(runtime)
        for entry in await _models(runtime, access):
            if entry["id"] == model_id:
                return JSONResponse(entry)
        raise OpenAIError(404, f"The model {model_id!r} does not exist", code="model_not_found")
    except OpenAIError as exc:
        return exc.response()


__all__ = ["error_body", "router"]
