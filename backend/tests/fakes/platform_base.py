"""A local HTTP server (Starlette under uvicorn, on a free port of 127.0.0.1, in a thread)
that fake chat platforms build on: it records every call and lets tests wait for one.

It also serves test gates: `GET /gate/{name}` (what the `hold` tool of tests/channels/hold.py
calls from inside a run) answers only once the test calls `release(name)`, so a test holds a
run open exactly as long as it needs to, without guessing a duration."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from support.threaded_server import ThreadedServer


@dataclass
class Call:
    method: str  # the platform's API method (sendMessage, chat.update...)
    body: dict[str, Any]
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)  # when the call arrived


class PlatformServer:
    ws: Literal["auto", "websockets-sansio"] = "auto"  # uvicorn's WebSocket implementation

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._cond = threading.Condition()
        self.down = False  # answer every API call with 503
        # method -> how many of its next calls are refused with 429 (recorded as "method!429")
        self.limited: dict[str, int] = {}
        self.retry_after = 1  # the seconds a 429 asks to wait
        self._http: ThreadedServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0
        self._released: set[str] = set()  # gates opened by `release`
        self._held: list[tuple[str, asyncio.AbstractEventLoop, asyncio.Event]] = []

    def routes(self) -> list[BaseRoute]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, call: Call) -> None:
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

    def take_limit(self, method: str, body: dict[str, Any]) -> bool:
        """Whether this call of `method` is to be refused with 429 (then it is recorded)."""
        with self._cond:
            left = self.limited.get(method, 0)
            if left <= 0:
                return False
            self.limited[method] = left - 1
        self.record(Call(f"{method}!429", body))
        return True

    def of(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, check: Callable[[], Any], timeout: float = 90.0) -> Any:
        """Block until `check()` is truthy (re-checked after every recorded call)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = check()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"timed out; last calls: {[c.method for c in self.calls[-20:]]}"
                    )
                self._cond.wait(left)

    def release(self, gate: str) -> None:
        """Open `gate`: the requests waiting on it answer, and later ones pass at once."""
        with self._cond:
            self._released.add(gate)
            waiting = [(loop, event) for name, loop, event in self._held if name == gate]
        for loop, event in waiting:
            loop.call_soon_threadsafe(event.set)

    async def _gate(self, request: Request) -> Response:
        gate = request.path_params["name"]
        loop, event = asyncio.get_running_loop(), asyncio.Event()
        with self._cond:
            if gate in self._released:
                event.set()
            else:
                self._held.append((gate, loop, event))
        self.record(Call("gate", {"name": gate}))
        await event.wait()
        return PlainTextResponse(f"{gate} released")

    def start(self) -> Self:
        routes = [*self.routes(), Route("/gate/{name}", self._gate, methods=["GET"])]
        self._http = ThreadedServer(
            Starlette(routes=routes), lifespan="off", name="fake platform server", ws=self.ws
        ).start()
        self.port = self._http.port
        return self

    def stop(self) -> None:
        with self._cond:
            gates = {name for name, _, _ in self._held}
        for gate in gates:  # nothing held keeps the server from shutting down
            self.release(gate)
        if self._http is not None:
            self._http.stop()
