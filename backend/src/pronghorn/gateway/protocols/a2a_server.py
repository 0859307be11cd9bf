"""A2A at `/api/langgraph/a2a/{assistant_id}`: JSON-RPC 2.0, protocol 0.3 (and 1.0).

Methods: `message/send` (blocking unless `configuration.blocking` is false),
`message/stream` (SSE, one JSON-RPC response per event: the task, `working`, the answer
as artifact chunks while tokens stream, then the final status), `tasks/get` and
`tasks/cancel` (which cancels the run and answers the `canceled` task). The 1.0 names
(`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`) are served too, converted to
and from 0.3 by a2a_dialects.py. The agent card is at
`…/a2a/{assistant_id}/.well-known/agent-card.json` (and, as the reference serves it,
`/api/langgraph/.well-known/agent-card.json?assistant_id=…`); it is a 0.3 card that also
lists both interfaces in `supportedInterfaces`, so 1.x clients pick 1.0.

`message.contextId` is the thread (a new one when absent); a message naming the `taskId`
of an `input-required` task resumes that task's run on its thread with the message (text,
or the data part) as the interrupt's answer. Text and data parts in: text becomes the user
message, data is merged into the graph input. Errors are JSON-RPC error objects.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from typing import TypeVar, cast

import orjson
from a2a.compat.v0_3 import types as a2a
from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import Response, StreamingResponse

from pronghorn import __version__
from pronghorn.auth.authorizer import Action
from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.models.a2a import (
    CARD_ERRORS,
    RPC_ANSWERS,
    AgentCard,
    JsonRpcRequest,
    JsonRpcResponse,
)
from pronghorn.gateway.models.bodies import json_body
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.protocols import a2a_tasks as tasks
from pronghorn.gateway.protocols.a2a_dialects import METHODS, BadParams, Dialect, StreamEvent
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.errors import DomainError, NotFound, Unavailable
from pronghorn.runtime.services import agent_calls as calls
from pronghorn.runtime.services import agent_output as output
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/langgraph", tags=["a2a"])

PROTOCOL_VERSION = "0.3.0"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND, TASK_NOT_CANCELABLE, UNSUPPORTED, CONTENT_TYPE = -32001, -32002, -32004, -32005


class RpcError(Exception):
    def __init__(self, code: int, message: str, status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


RpcId = str | int | None


def _error(rpc_id: RpcId, exc: RpcError) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": exc.code, "message": exc.message}}
    return JSONResponse(body, status_code=exc.status)


def _result(rpc_id: RpcId, result: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rpc_id, "result": result}


def _base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


async def _callee(runtime: AppRuntime, access: Access, assistant_id: str) -> calls.Callee:
    if not runtime.config.protocols.a2a.enabled:
        raise RpcError(METHOD_NOT_FOUND, "A2A is disabled (protocols.a2a.enabled)", 404)
    try:
        return await calls.find_callee(
            runtime, access, assistant_id, runtime.config.protocols.a2a.assistants
        )
    except NotFound as exc:
        raise RpcError(INVALID_PARAMS, exc.message, 404) from None


# -- the agent card ---------------------------------------------------------------------
def agent_card(runtime: AppRuntime, callee: calls.Callee, base_url: str) -> dict[str, object]:
    url = f"{base_url}/api/langgraph/a2a/{callee.assistant_id}"
    schemes: dict[str, a2a.SecurityScheme] | None = None
    security: list[dict[str, list[str]]] | None = None
    if runtime.config.auth.mode != "none":
        schemes = {
            "apiKey": a2a.SecurityScheme(
                root=a2a.APIKeySecurityScheme(in_=a2a.In.header, name="X-Api-Key")
            ),
            "bearer": a2a.SecurityScheme(root=a2a.HTTPAuthSecurityScheme(scheme="bearer")),
        }
        security = [{"apiKey": []}, {"bearer": []}]
    modes = ["text/plain", "application/json"]
    card = a2a.AgentCard(
        name=callee.name,
        description=callee.description,
        url=url,
        version=__version__,
        protocol_version=PROTOCOL_VERSION,
        preferred_transport="JSONRPC",
        capabilities=a2a.AgentCapabilities(
            streaming=True, push_notifications=False, state_transition_history=False
        ),
        default_input_modes=modes,
        default_output_modes=modes,
        skills=[
            a2a.AgentSkill(
                id=callee.graph_id,
                name=callee.name,
                description=callee.description,
                tags=["pronghorn", callee.graph_id],
            )
        ],
        security_schemes=schemes,
        security=security,
    )
    out = tasks.dump(card)
    # What 1.x clients read (they prefer 1.0, and fall back to 0.3); 0.3 clients ignore it.
    out["supportedInterfaces"] = [
        {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": version}
        for version in ("1.0", "0.3")
    ]
    return out


async def _card_response(
    request: Request, runtime: AppRuntime, access: Access, assistant_id: str
) -> Response:
    try:
        callee = await _callee(runtime, access, assistant_id)
    except RpcError as exc:
        return JSONResponse({"detail": exc.message}, status_code=exc.status)
    return JSONResponse(agent_card(runtime, callee, _base_url(request)))


@router.get(
    "/a2a/{assistant_id}/.well-known/agent-card.json",
    response_model=AgentCard,
    responses=CARD_ERRORS,
)
async def get_agent_card(
    assistant_id: str,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    return await _card_response(request, runtime, access, assistant_id)


@router.get(
    "/.well-known/agent-card.json",
    response_model=AgentCard,
    responses={**CARD_ERRORS, **errors(422)},
)
async def get_agent_card_by_query(
    request: Request,
    assistant_id: str = Query(...),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    return await _card_response(request, runtime, access, assistant_id)


# -- JSON-RPC ---------------------------------------------------------------------------
@router.post(
    "/a2a/{assistant_id}",
    response_model=JsonRpcResponse,
    responses=RPC_ANSWERS,
    openapi_extra=json_body(JsonRpcRequest),
)
async def post_a2a(
    assistant_id: str,
    request: Request,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    rpc_id: RpcId = None
    try:
        try:
            envelope = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            raise RpcError(PARSE_ERROR, "Parse error: the body is not JSON") from None
        if not isinstance(envelope, dict):
            raise RpcError(INVALID_REQUEST, "Invalid request: expected a JSON-RPC object")
        env = cast(dict[str, object], envelope)  # a JSON object's keys are strings
        raw_id = env.get("id")
        # JSON-RPC ids are strings, numbers or null (`true` is not an id, though a Python int)
        if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool):
            rpc_id = raw_id
        method, params = env.get("method"), env.get("params")
        if env.get("jsonrpc") != "2.0" or not isinstance(method, str):
            raise RpcError(INVALID_REQUEST, "Invalid request: jsonrpc '2.0' and a method needed")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: expected an object")
        if method not in METHODS:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        dialect, op = METHODS[method]
        callee = await _callee(runtime, access, assistant_id)
        ctx = _Call(runtime, access, callee, _base_url(request))
        try:
            p = dialect.params(op, cast(dict[str, object], params))
        except BadParams as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from None
        if op == "stream":
            return await ctx.stream(rpc_id, p, dialect)
        if op == "send":
            task = await ctx.send(p)
        elif op == "get":
            task = await ctx.get(p)
        else:
            task = await ctx.cancel(p)
        return JSONResponse(_result(rpc_id, dialect.task(task, op)))
    except RpcError as exc:
        return _error(rpc_id, exc)
    except Unavailable as exc:  # shutting down: retry elsewhere or later
        return _error(rpc_id, RpcError(INTERNAL_ERROR, exc.message, 503))
    except DomainError as exc:  # an unknown or another user's thread, a refused run
        return _error(rpc_id, RpcError(INVALID_PARAMS, exc.message))


_Params = TypeVar("_Params", bound=BaseModel)


def _validate(model: type[_Params], params: dict[str, object]) -> _Params:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        raise RpcError(INVALID_PARAMS, f"Invalid params: {where}: {err.get('msg')}") from None


def _input_of(message: a2a.Message) -> tuple[str, dict[str, object]]:
    """The message's text and its data parts (merged)."""
    if message.role != a2a.Role.user:
        raise RpcError(INVALID_PARAMS, "Invalid params: message.role must be 'user'")
    texts: list[str] = []
    data: dict[str, object] = {}
    for part in message.parts:
        inner = part.root
        if isinstance(inner, a2a.TextPart):
            texts.append(inner.text)
        elif isinstance(inner, a2a.DataPart):
            data.update(inner.data)
        else:
            raise RpcError(CONTENT_TYPE, "Content type not supported: send text or data parts")
    text = "\n".join(t for t in texts if t)
    if not text and not data:
        raise RpcError(INVALID_PARAMS, "Invalid params: the message has no text or data")
    return text, data


def _answer_value(text: str, data: dict[str, object]) -> object:
    """What an interrupt is resumed with: the text, the data, or both (text under "text")."""
    if data and text:
        return {**data, "text": text}
    return data or text


class _Call:
    """One JSON-RPC call on one assistant, for one caller."""

    def __init__(
        self, runtime: AppRuntime, access: Access, callee: calls.Callee, base_url: str
    ) -> None:
        self.runtime = runtime
        self.access = access
        self.callee = callee
        self.base_url = base_url

    async def _task_run(self, task_id: str, action: Action = "read") -> Mapping[str, object]:
        """The task's current run (`TaskNotFound` for an unknown task or another
        user's, or one of another assistant)."""
        try:
            first = await calls.owned_run(self.runtime, self.access, task_id, action)
        except NotFound:
            raise RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}") from None
        if first["assistant_id"] != self.callee.assistant_id or tasks.task_of_run(first) != task_id:
            raise RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
        runs = await calls.thread_runs(self.runtime, str(first["thread_id"]))
        return tasks.newest_run(runs, task_id) or first

    async def _task(
        self, task_id: str, run: Mapping[str, object], history: int | None = None
    ) -> a2a.Task:
        return await tasks.build_task(
            self.runtime, task_id, run, base_url=self.base_url, history_length=history
        )

    async def _start(self, params: dict[str, object], modes: tuple[str, ...]) -> tuple[str, Job]:
        send = _validate(a2a.MessageSendParams, params)
        text, data = _input_of(send.message)
        context_id = send.message.context_id
        if context_id is not None:
            try:
                context_id = str(uuid.UUID(context_id))
            except ValueError:
                raise RpcError(INVALID_PARAMS, "Invalid params: contextId must be a UUID") from None
        metadata: dict[str, object] = {"protocol": "a2a"}
        if send.message.task_id:  # a follow-up to a task waiting for input
            task_id = send.message.task_id
            run = await self._task_run(task_id, "update")
            task = await self._task(task_id, run)
            state = task.status.state
            if state in tasks.TERMINAL:
                raise RpcError(
                    UNSUPPORTED,
                    f"Task {task_id} is {state.value}: terminal states are final; send a new "
                    "message in the same contextId to continue the conversation",
                )
            if state != a2a.TaskState.input_required:
                raise RpcError(
                    UNSUPPORTED, f"Task {task_id} is {state.value}: it takes no input now"
                )
            if context_id is not None and context_id != task.context_id:
                raise RpcError(INVALID_PARAMS, "Invalid params: contextId is not the task's")
            job = await calls.start_call(
                self.runtime,
                self.access,
                self.callee,
                thread_id=task.context_id,
                resume=_answer_value(text, data),
                modes=modes,
                metadata={**metadata, tasks.TASK_KEY: task_id},
            )
            return task_id, job
        graph_input: dict[str, object] = dict(data)
        if text:
            graph_input["messages"] = [{"role": "user", "content": text}]
        job = await calls.start_call(
            self.runtime,
            self.access,
            self.callee,
            thread_id=context_id,
            graph_input=graph_input,
            modes=modes,
            metadata=metadata,
        )
        return job.run_id, job

    async def send(self, params: dict[str, object]) -> a2a.Task:
        task_id, job = await self._start(params, ("values",))
        configuration = params.get("configuration")  # valid: _start validated the params
        blocking = (
            cast(dict[str, object], configuration).get("blocking")
            if isinstance(configuration, dict)
            else None
        )
        if blocking is not False:
            await job.done.wait()
        run = await calls.owned_run(self.runtime, self.access, job.run_id)
        return await self._task(task_id, run)

    async def get(self, params: dict[str, object]) -> a2a.Task:
        query = _validate(a2a.TaskQueryParams, params)
        run = await self._task_run(query.id)
        return await self._task(query.id, run, query.history_length)

    async def cancel(self, params: dict[str, object]) -> a2a.Task:
        ident = _validate(a2a.TaskIdParams, params)
        run = await self._task_run(ident.id, "update")
        task = await self._task(ident.id, run)
        state = task.status.state
        if state in tasks.TERMINAL:
            raise RpcError(TASK_NOT_CANCELABLE, f"Task not cancelable: already {state.value}")
        if state == a2a.TaskState.input_required:  # nothing runs: note it on the thread
            await calls.note_on_thread(
                self.runtime, self.access, task.context_id, tasks.CANCELED_KEY, ident.id
            )
        else:
            await self.runtime.runs.cancel(
                str(run["thread_id"]), str(run["run_id"]), action="interrupt", wait=True
            )
        run = await calls.owned_run(self.runtime, self.access, str(run["run_id"]))
        return await self._task(ident.id, run)

    async def stream(self, rpc_id: RpcId, params: dict[str, object], dialect: Dialect) -> Response:
        task_id, job = await self._start(params, ("messages-tuple",))
        first = await calls.owned_run(self.runtime, self.access, job.run_id)
        opening = await self._task(task_id, first)
        return StreamingResponse(
            self._events(rpc_id, task_id, job, opening, dialect),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store"},
        )

    async def _events(
        self, rpc_id: RpcId, task_id: str, job: Job, opening: a2a.Task, dialect: Dialect
    ) -> AsyncIterator[bytes]:
        context_id = job.thread_id

        def frame(obj: StreamEvent) -> bytes:
            return b"data: " + orjson.dumps(_result(rpc_id, dialect.event(obj))) + b"\n\n"

        def status(state: a2a.TaskState, final: bool, message: a2a.Message | None = None) -> bytes:
            return frame(
                a2a.TaskStatusUpdateEvent(
                    task_id=task_id,
                    context_id=context_id,
                    status=a2a.TaskStatus(state=state, message=message, timestamp=tasks.now_iso()),
                    final=final,
                )
            )

        yield frame(opening)
        yield status(a2a.TaskState.working, False)
        chunks = 0
        async for event in calls.events(self.runtime, job):
            token = output.token_of(event)
            if not token:
                continue
            artifact = tasks.answer_artifact(job.run_id, [tasks.text_part(token)])
            yield frame(
                a2a.TaskArtifactUpdateEvent(
                    task_id=task_id,
                    context_id=context_id,
                    artifact=artifact,
                    append=chunks > 0,
                    last_chunk=False,
                )
            )
            chunks += 1
        await job.done.wait()
        run = await calls.owned_run(self.runtime, self.access, job.run_id)
        task = await self._task(task_id, run)
        for artifact in task.artifacts or []:
            if artifact.artifact_id.endswith("-answer") and chunks:
                continue  # already streamed
            yield frame(
                a2a.TaskArtifactUpdateEvent(
                    task_id=task_id, context_id=context_id, artifact=artifact, last_chunk=True
                )
            )
        yield status(task.status.state, True, task.status.message)


__all__ = ["router"]
