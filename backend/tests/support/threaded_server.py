"""An ASGI app served by uvicorn on a free port of 127.0.0.1, in a daemon thread: what the
fake providers, platforms, issuers and MCP servers of the tests run on."""

from __future__ import annotations

import socket
import threading
import time
from typing import Literal

import uvicorn
from starlette.types import ASGIApp


class ThreadedServer:
    def __init__(
        self,
        app: ASGIApp,
        *,
        lifespan: Literal["on", "off", "auto"] = "off",
        name: str = "server",
        ws: Literal["auto", "websockets-sansio"] = "auto",
    ) -> None:
        self.app = app
        self.ws: Literal["auto", "websockets-sansio"] = ws
        self.lifespan: Literal["on", "off", "auto"] = lifespan
        self.name = name
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    def start(self, timeout_s: float = 120.0) -> ThreadedServer:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="critical", access_log=False, lifespan=self.lifespan, ws=self.ws
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:  # uvicorn offers no event to wait on
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()  # its thread and listening socket do not outlive the attempt
                raise RuntimeError(f"the test {self.name} did not start")
            time.sleep(0.01)
        return self

    @property
    def running(self) -> bool:
        """Whether the server's thread is still alive."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, join_timeout_s: float = 15.0) -> None:
        """Stop as uvicorn does on SIGTERM; a server still waiting after `join_timeout_s` on a
        connection or a task (a stream no client reads any more) is made to exit at once, and
        one that still does not is an error, not a thread left running behind the tests."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=join_timeout_s)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
        if self.running:
            raise RuntimeError(f"the test {self.name} did not stop")
