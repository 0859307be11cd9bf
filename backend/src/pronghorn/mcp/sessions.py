"""MCP client sessions: one owner task each, pooled.

An MCP ``ClientSession`` lives inside anyio task groups that must be entered and left by
the same task, so every session is owned by a dedicated task (:class:`Session`): it opens
the transport, initializes, reports ready, then waits until it is asked to close. Any task
may call tools on it meanwhile. A session whose transport ends (the process crashed, the
server hung up) is marked dead and the pool starts a new one on the next call.

:class:`SessionPool` keys sessions by (server, scope): the scope is ``user/thread`` for
stdio servers (one process per conversation, working directory = the thread's workspace)
and ``""`` for http/sse servers (one shared session). stdio sessions are kept in a bounded
LRU; the least recently used is closed beyond the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import sys
from collections import OrderedDict
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, cast

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from pronghorn.config.schema.mcp import McpServerConfig
from pronghorn.mcp.errors import McpUnavailable
from pronghorn.mcp.oauth import BearerAuth, TokenSource

log = logging.getLogger("pronghorn.mcp")

SHARED_SCOPE = ""
HTTP_TIMEOUT_S = 30.0
SSE_READ_TIMEOUT_S = 300.0
CLOSE_TIMEOUT_S = 10.0
STDERR_TAIL_CHARS = 600


def stdio_env(server: McpServerConfig, *, home: Path, tmpdir: Path) -> dict[str, str]:
    """The whole environment of a stdio server: PATH (to find npx/uvx), HOME, LANG and
    TMPDIR, plus the server's own `env`. Nothing else of the gateway's environment."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmpdir),
    }
    env.update({k: v.get_secret_value() for k, v in server.env.items()})
    return env


@dataclass(frozen=True)
class Placement:
    """Where a stdio server runs: its working directory and a file for its stderr."""

    cwd: Path
    stderr_path: Path


@contextlib.asynccontextmanager
async def open_client_session(
    name: str,
    server: McpServerConfig,
    *,
    placement: Placement | None,
    tokens: TokenSource | None,
    stderr: TextIO | None,
) -> AsyncGenerator[ClientSession, None]:
    """An initialized ``ClientSession`` to ``server`` over its transport (the mcp SDK's)."""
    if server.type == "stdio":
        assert server.command is not None and placement is not None
        tmp = placement.cwd / ".mcp-tmp"
        await asyncio.to_thread(tmp.mkdir, parents=True, exist_ok=True)
        params = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env=stdio_env(server, home=placement.cwd, tmpdir=tmp),
            cwd=placement.cwd,
        )
        async with (
            stdio_client(params, errlog=stderr or sys.stderr) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
        return
    assert server.url is not None
    headers = {k: v.get_secret_value() for k, v in server.headers.items()}
    auth = BearerAuth(tokens) if tokens is not None else None
    if server.type == "http":
        client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(HTTP_TIMEOUT_S, read=SSE_READ_TIMEOUT_S),
            auth=auth,
            follow_redirects=False,
        )
        async with (
            client,
            streamable_http_client(server.url, http_client=client) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
        return
    async with (
        sse_client(server.url, headers, HTTP_TIMEOUT_S, SSE_READ_TIMEOUT_S, auth=auth) as (
            read,
            write,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _tail(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - STDERR_TAIL_CHARS))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _first_inner(exc: BaseException) -> BaseException | None:
    """The first exception inside an exception group (None: not a group, or empty)."""
    if not isinstance(exc, BaseExceptionGroup):
        return None
    group = cast("BaseExceptionGroup[BaseException]", exc)
    return group.exceptions[0] if group.exceptions else None


def describe(exc: BaseException) -> str:
    """A one-line reason, looking inside anyio's exception groups."""
    reason = exc
    while (inner := _first_inner(reason)) is not None:
        reason = inner
    text = str(reason).strip()
    return f"{type(reason).__name__}: {text}" if text else type(reason).__name__


@dataclass(eq=False)
class Session:
    """One live session and the task that owns it."""

    name: str
    server: McpServerConfig
    scope: str
    placement: Placement | None = None
    tokens: TokenSource | None = None
    session: ClientSession | None = None
    error: str | None = None
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    @property
    def settled(self) -> bool:
        """It has started, or failed to."""
        return self._ready.is_set()

    @property
    def alive(self) -> bool:
        return self.session is not None and self._task is not None and not self._task.done()

    def start(self) -> None:
        # A fresh context: the owner task must not carry the starting run's context vars.
        self._task = asyncio.get_running_loop().create_task(
            self._own(), name=f"mcp:{self.name}", context=contextvars.Context()
        )

    async def _own(self) -> None:
        stderr: TextIO | None = None
        try:
            if self.placement is not None:
                path = self.placement.stderr_path
                await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
                stderr = await asyncio.to_thread(path.open, "a", encoding="utf-8")
            async with open_client_session(
                self.name, self.server, placement=self.placement, tokens=self.tokens, stderr=stderr
            ) as session:
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            reason = describe(exc)
            tail = await asyncio.to_thread(
                _tail, self.placement.stderr_path if self.placement else None
            )
            self.error = f"{reason}; stderr: {tail}" if tail else reason
            if self.session is not None:
                log.warning("mcp server %s (%s) went away: %s", self.name, self.scope, self.error)
        finally:
            self.session = None
            self._ready.set()
            if stderr is not None:
                await asyncio.to_thread(stderr.close)

    async def wait_ready(self) -> ClientSession:
        try:
            async with asyncio.timeout(self.server.startup_timeout_s):
                await self._ready.wait()
        except TimeoutError:
            await self.close()
            raise McpUnavailable(
                f"MCP server {self.name!r} did not start within {self.server.startup_timeout_s:g} s"
            ) from None
        if self.session is None:
            raise McpUnavailable(f"MCP server {self.name!r} failed to start: {self.error}")
        return self.session

    async def close(self) -> None:
        """Wind the session down (stdio: stdin closed, then SIGTERM/SIGKILL by the SDK); one
        still starting is cancelled at once."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if not self.settled:
            task.cancel()
        _, pending = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT_S)
        if pending:
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_TIMEOUT_S)


@dataclass
class SessionPool:
    """Sessions by (server, scope); stdio ones in a bounded LRU."""

    max_stdio: int = 32
    _items: OrderedDict[tuple[str, str], Session] = field(default_factory=OrderedDict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def count(self, name: str | None = None) -> int:
        return sum(
            1 for (n, _), s in self._items.items() if (name is None or n == name) and s.alive
        )

    async def get(
        self,
        name: str,
        server: McpServerConfig,
        scope: str,
        *,
        placement: Placement | None = None,
        tokens: TokenSource | None = None,
    ) -> ClientSession:
        key = (name, scope)
        evicted: list[Session] = []
        async with self._lock:
            found = self._items.get(key)
            if found is not None and found.server != server:
                evicted.append(found)
                found = None
            if found is not None and found.settled and not found.alive:
                evicted.append(found)  # dead (crashed or failed): start again
                found = None
            if found is None:
                found = Session(name, server, scope, placement=placement, tokens=tokens)
                found.start()
                self._items[key] = found
            self._items.move_to_end(key)
            if server.type == "stdio":
                stdio = [k for k, s in self._items.items() if s.server.type == "stdio"]
                for old in stdio[: max(0, len(stdio) - self.max_stdio)]:
                    evicted.append(self._items.pop(old))
        for old in evicted:
            await old.close()
        try:
            return await found.wait_ready()
        except McpUnavailable:
            async with self._lock:
                if self._items.get(key) is found:
                    del self._items[key]
            raise

    async def discard(self, name: str, scope: str, session: ClientSession) -> None:
        """Forget a session that failed under a call (the next call starts a new one)."""
        async with self._lock:
            found = self._items.get((name, scope))
            if found is None or found.session is not session:
                return
            del self._items[(name, scope)]
        await found.close()

    async def close_server(self, name: str) -> None:
        async with self._lock:
            gone = [self._items.pop(k) for k in list(self._items) if k[0] == name]
        await asyncio.gather(*(s.close() for s in gone))

    async def close_thread(self, thread_id: str) -> int:
        """Stop every stdio session of one thread (scopes ``<user>/<thread>``)."""
        suffix = f"/{thread_id}"
        async with self._lock:
            gone = [self._items.pop(k) for k in list(self._items) if k[1].endswith(suffix)]
        await asyncio.gather(*(s.close() for s in gone))
        return len(gone)

    async def aclose(self) -> None:
        async with self._lock:
            gone = list(self._items.values())
            self._items.clear()
        await asyncio.gather(*(s.close() for s in gone))
