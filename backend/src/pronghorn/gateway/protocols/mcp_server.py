"""The MCP endpoint, `/api/langgraph/mcp/`: every exposed assistant as a tool.

Built on the `mcp` SDK's low-level server and its Streamable HTTP session manager (POST,
GET and DELETE as the transport specifies), mounted as an ASGI endpoint behind our auth
middleware; the manager runs for the app's lifespan. Sessions are on by default so a
client's `notifications/cancelled` reaches the call it cancels (`protocols.mcp.stateless`
turns them off for replicas without sticky routing). A session belongs to the principal
that opened it: another credential gets 404 for it.

`tools/list` answers the assistants the caller may read that take messages and that
`protocols.mcp.assistants` names. `tools/call` runs one — an ordinary run of the caller,
on a new thread or the `thread_id` given — sends a progress notification when the run starts and per
finished graph step when the client asked for progress, and returns the final answer (text, plus
structured `{answer, thread_id, run_id, status}`). Cancelling the request cancels the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

import orjson
from fastapi import FastAPI
from mcp import types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from pronghorn import __version__
from pronghorn.agent.untyped import as_dict
from pronghorn.auth.principal import Principal
from pronghorn.gateway.protocols.mcp_tools import (
    OUTPUT_SCHEMA,
    BadCall,
    input_schema,
    parse_arguments,
    tool_names,
)
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.errors import DomainError
from pronghorn.runtime.services import agent_calls as calls
from pronghorn.runtime.services import agent_output as output
from pronghorn.runtime.wiring.app_runtime import AppRuntime

PATH = "/api/langgraph/mcp"


def _principal_of(request: object) -> Principal:
    if not isinstance(request, Request):
        raise BadCall("no HTTP request behind this MCP call")
    state = as_dict(request.scope.get("state")) or {}
    principal = state.get("principal")
    if not isinstance(principal, Principal):
        raise BadCall("unauthenticated")
    return principal


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


class McpService:
    """The MCP server of one app (built in its lifespan, with the AppRuntime)."""

    def __init__(self, runtime: AppRuntime) -> None:
        self.runtime = runtime
        self.server: Server[object, object] = Server(
            "pronghorn",
            version=__version__,
            instructions="Each tool is a Pronghorn assistant: ask it a question, get its answer.",
        )
        self.server.list_tools()(self._list_tools)
        self.server.call_tool(validate_input=False)(self._call_tool)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            stateless=runtime.config.protocols.mcp.stateless,
        )

    def _access(self) -> Access:
        return Access(_principal_of(self.server.request_context.request))

    async def _tools(self, access: Access) -> dict[str, calls.Callee]:
        exposure = self.runtime.config.protocols.mcp.assistants
        return tool_names(await calls.list_callees(self.runtime, access, exposure))

    def _builtin(self, callee: calls.Callee) -> bool:
        graphs = self.runtime.graphs
        return callee.graph_id in graphs and graphs.entry(callee.graph_id).spec.startswith(
            "builtin:"
        )

    async def _list_tools(self) -> list[types.Tool]:
        tools = await self._tools(self._access())
        return [
            types.Tool(
                name=name,
                title=callee.name,
                description=callee.description,
                inputSchema=input_schema(callee, self._builtin(callee)),
                outputSchema=OUTPUT_SCHEMA,
            )
            for name, callee in tools.items()
        ]

    async def _call_tool(self, name: str, arguments: dict[str, object]) -> types.CallToolResult:
        try:
            access = self._access()
            callee = (await self._tools(access)).get(name)
            if callee is None:
                raise BadCall(f"Unknown tool {name!r}")
            call = parse_arguments(arguments, input_schema(callee, self._builtin(callee)))
            job = await calls.start_call(
                self.runtime,
                access,
                callee,
                thread_id=call.thread_id,
                graph_input={
                    **call.extra,
                    "messages": [{"role": "user", "content": call.question}],
                },
                modes=("updates",),
                metadata={"protocol": "mcp"},
            )
        except (BadCall, DomainError) as exc:
            return _error(str(exc))
        try:
            await self._follow(job)
        except BaseException:  # cancelled (notifications/cancelled, or the client left)
            calls.cancel_soon(self.runtime, job)
            raise
        return _result(job)

    async def _follow(self, job: Job) -> None:
        """Wait for the run, reporting each finished step as progress if asked to."""
        ctx = self.server.request_context
        token = ctx.meta.progressToken if ctx.meta is not None else None
        if token is None:
            await job.done.wait()
            return
        steps = 0
        await ctx.session.send_progress_notification(
            token,
            steps,
            None,
            f"run {job.run_id} started on thread {job.thread_id}",
            related_request_id=str(ctx.request_id),
        )
        async for event in calls.events(self.runtime, job):
            if not event.event.startswith("updates"):
                continue
            data = output.to_jsonable_bytes(event.data)
            step = as_dict(data)
            nodes = ", ".join(step) if step is not None else "a step"
            steps += 1
            await ctx.session.send_progress_notification(
                token, steps, None, f"{nodes} done", related_request_id=str(ctx.request_id)
            )
        await job.done.wait()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[McpService, None]:
        async with self.manager.run():
            yield self


def _result(job: Job) -> types.CallToolResult:
    failed = output.error_of(job.output)
    if failed is not None:
        return _error(f"The assistant's run failed: {failed}")
    if job.status == "interrupted":
        return _error("The run was cancelled before it answered")
    answer = output.last_answer(job.output)
    status = "completed"
    waiting = output.interrupts_of(job.output)
    if waiting:
        status = "input_required"
        asked = waiting[0] if isinstance(waiting[0], str) else orjson.dumps(waiting[0]).decode()
        answer = f"The assistant is waiting for input: {asked}"
    structured = {
        "answer": answer,
        "thread_id": job.thread_id,
        "run_id": job.run_id,
        "status": status,
    }
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=answer)],
        structuredContent=structured,
        isError=False,
    )


class McpEndpoint:
    """The ASGI endpoint: hands authenticated requests to the app's session manager."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = scope["app"]
        service: McpService | None = getattr(app.state, "mcp", None)
        runtime: AppRuntime = app.state.runtime
        if service is None or not runtime.config.protocols.mcp.enabled:
            await JSONResponse(
                {"detail": "The MCP endpoint is disabled (protocols.mcp.enabled)"},
                status_code=404,
            )(scope, receive, send)
            return
        principal: Principal = scope["state"]["principal"]
        # The session manager binds each session to the credential that opened it.
        token = AccessToken(
            token="", client_id=principal.identity, scopes=[], subject=principal.identity
        )
        scope["user"] = AuthenticatedUser(token)
        await service.manager.handle_request(scope, receive, send)


def add_mcp_routes(app: FastAPI) -> None:
    endpoint = McpEndpoint()
    for path in (PATH, f"{PATH}/"):
        app.router.routes.append(
            Route(path, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False)
        )
