"""A local HTTP server (Starlette under uvicorn, on a free port of 127.0.0.1, in a thread)
that fake chat platforms build on: it records every call and lets tests wait for one."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import BaseRoute


@dataclass
class Call:
    method: str  # the platform's API method (sendMessage, chat.update...)
    body: dict[str, Any]
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)


class PlatformServer:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._cond = threading.Condition()
        self.down = False  # answer every API call with 503
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0

    def routes(self) -> list[BaseRoute]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, call: Call) -> None:
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

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

    def start(self) -> PlatformServer:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        app = Starlette(routes=self.routes())
        config = uvicorn.Config(app, log_level="critical", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:  # uvicorn offers no event to wait on
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake platform server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
