"""The agent's HTTP app: bearer-token auth, one route per sandbox operation.

Commands run with bash in the thread's workspace with a fixed environment (never the
agent's own, which holds its token), rlimits per command, a timeout that kills the whole
process group, and bounded output; a client that goes away kills its command too. File
operations are the local sandbox's own (``files.py``): paths contained, links never
followed out, bounded reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import re
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pronghorn.sandbox import files
from pronghorn.sandbox.agent import protocol as p
from pronghorn.sandbox.base import CommandResult
from pronghorn.sandbox.bwrap import SANDBOX_PATH
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.limits import CommandLimits
from pronghorn.sandbox.paths import VIRTUAL_ROOT, ThreadPaths, validate_thread_id
from pronghorn.sandbox.process import run_process

log = logging.getLogger(__name__)

_VIRTUAL_RE = re.compile(re.escape(VIRTUAL_ROOT) + r"(?=/|$|[^A-Za-z0-9_.-])")
Body = TypeVar("Body", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    token: str
    # The thread's folder (scope "thread") or the user's folder holding threads/<id>/.
    root: Path
    scope: str = "thread"


def _error(status: int, kind: p.ErrorKind, detail: str) -> JSONResponse:
    return JSONResponse(p.ErrorBody(error=kind, detail=detail).model_dump(), status_code=status)


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


class Agent:
    def __init__(self, settings: AgentSettings) -> None:
        self._settings = settings
        self._token = settings.token.encode()

    def paths(self, thread_id: str | None) -> ThreadPaths:
        root = self._settings.root
        if self._settings.scope == "user":
            if thread_id is None:
                raise _Refused(_error(400, "bad_request", "thread_id is required"))
            try:
                thread_id = validate_thread_id(thread_id)
            except ValueError as exc:
                raise _Refused(_error(400, "bad_request", str(exc))) from None
            root = root / "threads" / thread_id
        paths = ThreadPaths(
            user_id="sandbox",
            thread_id=thread_id or "",
            root=root,
            workspace=root / "workspace",
            uploads=root / "uploads",
            outputs=root / "outputs",
        )
        return paths

    async def body(self, request: Request, model: type[Body]) -> Body:
        header = request.headers.get("authorization", "")
        given = header.removeprefix("Bearer ").encode()
        if not header.startswith("Bearer ") or not hmac.compare_digest(given, self._token):
            raise _Refused(_error(401, "unauthorized", "a valid bearer token is required"))
        size = int(request.headers.get("content-length") or 0)
        if size > p.MAX_BODY_BYTES:
            raise _Refused(_error(413, "bad_request", "request body too large"))
        raw = await request.body()
        if len(raw) > p.MAX_BODY_BYTES:
            raise _Refused(_error(413, "bad_request", "request body too large"))
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            raise _Refused(_error(400, "bad_request", str(exc))) from None

    async def execute(self, request: Request) -> Response:
        body = await self.body(request, p.ExecRequest)
        if "\x00" in body.command:
            return _error(400, "sandbox", "The command contains a NUL byte.")
        paths = self.paths(body.thread_id)
        await asyncio.to_thread(paths.ensure)
        run = asyncio.create_task(self._run(paths, body))
        gone = asyncio.create_task(_disconnected(request))
        try:
            await asyncio.wait({run, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not run.done():  # the gateway gave up: the command dies with the request
                run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
        if run.cancelled() or not run.done():
            with contextlib.suppress(asyncio.CancelledError):
                await run
            return Response(status_code=499)
        result = run.result()
        return JSONResponse(
            p.ExecResponse(
                exit_code=result.exit_code,
                stdout=result.stdout,
                stderr=result.stderr,
                timed_out=result.timed_out,
                truncated=result.truncated,
            ).model_dump()
        )

    async def _run(self, paths: ThreadPaths, body: p.ExecRequest) -> CommandResult:
        root = str(paths.root)
        rewrite = root != VIRTUAL_ROOT
        command = _VIRTUAL_RE.sub(lambda _: root, body.command) if rewrite else body.command
        limits = CommandLimits(
            nproc=body.limits.processes,
            address_space=None,  # the pod's memory limit (cgroup) bounds memory
            cpu_seconds=body.limits.cpu_seconds,
            file_size=body.limits.file_size_bytes,
        )
        env = {
            "PATH": SANDBOX_PATH,
            "HOME": str(paths.workspace),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": tempfile.gettempdir(),
        }
        result = await run_process(
            limits.wrap(command),
            cwd=str(paths.workspace),
            env=env,
            timeout_s=body.timeout_s,
            max_output_chars=body.max_output_chars,
        )
        if not rewrite:
            return result
        return CommandResult(
            exit_code=result.exit_code,
            stdout=result.stdout.replace(root, VIRTUAL_ROOT),
            stderr=result.stderr.replace(root, VIRTUAL_ROOT),
            timed_out=result.timed_out,
            truncated=result.truncated,
        )

    async def read(self, request: Request) -> Response:
        b = await self.body(request, p.ReadRequest)
        return await self._file_op(
            b.thread_id,
            lambda t: files.read_file(t, b.path, b.start_line, b.end_line, b.max_chars),
        )

    async def write(self, request: Request) -> Response:
        b = await self.body(request, p.WriteRequest)
        return await self._file_op(
            b.thread_id, lambda t: files.write_file(t, b.path, b.content, b.append)
        )

    async def replace(self, request: Request) -> Response:
        b = await self.body(request, p.ReplaceRequest)
        return await self._file_op(
            b.thread_id, lambda t: files.str_replace(t, b.path, b.old, b.new, b.replace_all)
        )

    async def list_dir(self, request: Request) -> Response:
        b = await self.body(request, p.ListRequest)
        return await self._file_op(b.thread_id, lambda t: files.list_dir(t, b.path, b.max_depth))

    async def glob(self, request: Request) -> Response:
        b = await self.body(request, p.GlobRequest)
        return await self._file_op(b.thread_id, lambda t: files.glob(t, b.pattern, b.path))

    async def grep(self, request: Request) -> Response:
        b = await self.body(request, p.GrepRequest)
        return await self._file_op(
            b.thread_id, lambda t: files.grep(t, b.pattern, b.path, b.glob, b.max_matches)
        )

    async def _file_op(
        self, thread_id: str | None, op: Callable[[ThreadPaths], object]
    ) -> Response:
        paths = self.paths(thread_id)

        def work() -> object:
            paths.ensure()
            return op(paths)

        try:
            result = await asyncio.to_thread(work)
        except PathDeniedError as exc:
            return _error(400, "path_denied", str(exc))
        except SandboxError as exc:
            return _error(400, "sandbox", str(exc))
        return JSONResponse({"result": result})


async def _disconnected(request: Request) -> None:
    """Returns once the client has gone (the body was read already)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


Handler = Callable[[Request], Awaitable[Response]]


def _guarded(handler: Handler) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except _Refused as refused:
            return refused.response

    return endpoint


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def build_app(settings: AgentSettings) -> Starlette:
    agent = Agent(settings)
    v1 = p.API_PREFIX
    routes = [
        Route(p.HEALTH_PATH, _health, methods=["GET"]),
        Route(f"{v1}/exec", _guarded(agent.execute), methods=["POST"]),
        Route(f"{v1}/files/read", _guarded(agent.read), methods=["POST"]),
        Route(f"{v1}/files/write", _guarded(agent.write), methods=["POST"]),
        Route(f"{v1}/files/replace", _guarded(agent.replace), methods=["POST"]),
        Route(f"{v1}/files/list", _guarded(agent.list_dir), methods=["POST"]),
        Route(f"{v1}/files/glob", _guarded(agent.glob), methods=["POST"]),
        Route(f"{v1}/files/grep", _guarded(agent.grep), methods=["POST"]),
    ]
    return Starlette(routes=routes)
