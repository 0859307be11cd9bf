"""The gateway app in this process: its own event loop thread, its lifespan, streaming clients.

``InProcessServer`` has the shape of ``live.LiveServer`` (``workdir``, ``config``, ``url``,
``api``, ``write_config``, ``start``/``stop``, ``logs``) without the subprocess: ``start``
builds ``create_app(ConfigHolder(...))`` from the same YAML a live server would read, runs it
on a dedicated thread's event loop and drives its ASGI lifespan by hand; requests reach it
through the streaming transports of ``asgi_bridge``. Tests talk to it through

- ``sdk()`` / ``sync_sdk()``: the official ``langgraph_sdk`` clients (the SDK's own
  ``LangGraphClient`` over an httpx client on our transport), and
- ``http()`` / ``ahttp()``: plain httpx clients, base URL ``http://localhost`` (the Host
  guard serves loopback names only).

The app loop is not the test's loop, so sync clients in async tests, pytest-asyncio's
per-test loops and package-scoped servers all work. What still needs a real process
(signals, ``kill -9``, the CLI, a browser or another program reaching a port) stays on
``LiveServer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import create_app
from pronghorn.gateway.logs import TextFormatter
from support.asgi_bridge import (
    ASGIApp,
    AsyncStreamingTransport,
    Exchange,
    Message,
    SyncStreamingTransport,
    raw_request,
)

BASE_URL = "http://localhost"
_names = itertools.count(1)
# The SDK's own defaults (get_client): connect 5 s, read/write 300 s, pool 5 s.
SDK_TIMEOUT = httpx.Timeout(connect=5, read=300, write=300, pool=5)


class Lifespan:
    """Drives an ASGI app's lifespan protocol (startup, then shutdown) on the current loop."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self.state: dict[str, Any] = {}
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._stopped: asyncio.Future[None] | None = None

    async def startup(self) -> None:
        loop = asyncio.get_running_loop()
        self._started, self._stopped = loop.create_future(), loop.create_future()
        self._inbox.put_nowait({"type": "lifespan.startup"})
        self._task = asyncio.create_task(self._main(), name="lifespan")
        await self._started

    async def shutdown(self) -> None:
        assert self._task is not None and self._stopped is not None
        self._inbox.put_nowait({"type": "lifespan.shutdown"})
        try:
            await self._stopped
        finally:
            await self._task

    async def _main(self) -> None:
        scope: Message = {
            "type": "lifespan",
            "asgi": {"version": "3.0", "spec_version": "2.0"},
            "state": self.state,
        }
        try:
            await self._app(scope, self._inbox.get, self._send)
        except BaseException as exc:
            self._settle(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._settle(RuntimeError("the app's lifespan ended early"))

    async def _send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self._resolve(self._started)
        elif kind == "lifespan.startup.failed":
            self._settle(RuntimeError(f"startup failed: {message.get('message', '')}"))
        elif kind == "lifespan.shutdown.complete":
            self._resolve(self._stopped)
        elif kind == "lifespan.shutdown.failed":
            self._settle(RuntimeError(f"shutdown failed: {message.get('message', '')}"))

    @staticmethod
    def _resolve(future: asyncio.Future[None] | None) -> None:
        if future is not None and not future.done():
            future.set_result(None)

    def _settle(self, exc: BaseException) -> None:
        for future in (self._started, self._stopped):
            if future is not None and not future.done():
                future.set_exception(exc)
                return


class _ServerLog(logging.Handler):
    """Keeps the formatted records logged on one server's threads (its ``logs()``)."""

    def __init__(self, thread_prefix: str) -> None:
        super().__init__(logging.DEBUG)
        self.prefix = thread_prefix
        self.lines: list[str] = []
        self.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.threadName or ""
        return name == self.prefix or name.startswith(f"{self.prefix}-")

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextlib.contextmanager
def _keep_host_logging() -> Iterator[None]:
    """The app's lifespan configures the root logger for a process of its own; in a test
    process that would take logging away from pytest, so the root logger is put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers = handlers
        root.setLevel(level)


@dataclass
class InProcessServer:
    """A gateway app on its own event loop thread in this process (see the module doc)."""

    workdir: Path
    config: dict[str, Any]
    env: dict[str, str] = field(default_factory=dict)
    url: str = BASE_URL
    start_timeout: float = 120.0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _app: ASGIApp | None = None
    _lifespan: Lifespan | None = None
    _exchanges: set[Exchange] = field(default_factory=set)
    _log: _ServerLog | None = None
    _executor: ThreadPoolExecutor | None = None

    # --- the LiveServer shape -----------------------------------------------------------

    @property
    def api(self) -> str:
        return f"{self.url}/api/langgraph"

    @property
    def config_path(self) -> Path:
        return self.workdir / "config.yaml"

    @property
    def running(self) -> bool:
        return self._loop is not None

    def write_config(self, config: dict[str, Any] | None = None) -> None:
        if config is not None:
            self.config = config
        self.config_path.write_text(yaml.safe_dump(self.config), encoding="utf-8")

    def environ(self) -> dict[str, str]:
        """The server's environment: this process's without PRONGHORN_* (as LiveServer
        starts its child), plus ``env``."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("PRONGHORN_")}
        return {**base, **self.env}

    def start(self, timeout: float | None = None) -> InProcessServer:
        """Build the app and run its lifespan startup (``timeout``: ``start_timeout``)."""
        if self.running:
            raise RuntimeError("already started")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.write_config()
        environ = self.environ()
        holder = ConfigHolder(load_config(self.config_path, environ), environ)
        self._app = create_app(holder, base_dir=self.workdir)
        name = f"inproc-{next(_names)}"
        self._attach_log(name, str(self.config.get("logging", {}).get("level", "INFO")))
        self._executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix=f"{name}-io")
        loop = asyncio.new_event_loop()
        loop.set_default_executor(self._executor)
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name=name, daemon=True)
        self._thread.start()
        self._lifespan = Lifespan(self._app)
        try:
            with _keep_host_logging():
                self._call(self._lifespan.startup(), timeout or self.start_timeout)
        except BaseException:
            self._halt()
            raise
        return self

    def stop(self, timeout: float = 60.0) -> None:
        if not self.running:
            return
        try:
            self._call(self._shutdown(), timeout)
        except TimeoutError as exc:
            raise TimeoutError(f"the app did not stop in {timeout}s{self._stuck()}") from exc
        finally:
            self._halt()

    def restart(self) -> InProcessServer:
        self.stop()
        return self.start()

    def logs(self) -> str:
        return "\n".join(self._log.lines[-400:]) if self._log else ""

    # --- clients --------------------------------------------------------------------------

    def http(self, *, base_url: str | None = None, **kwargs: Any) -> httpx.Client:
        """A sync httpx client on the app (close it, or use it as a context manager)."""
        kwargs.setdefault("timeout", 30)
        transport = SyncStreamingTransport(self)
        return httpx.Client(transport=transport, base_url=base_url or self.url, **kwargs)

    def ahttp(self, *, base_url: str | None = None, **kwargs: Any) -> httpx.AsyncClient:
        """An async httpx client on the app, usable from any event loop."""
        kwargs.setdefault("timeout", 30)
        transport = AsyncStreamingTransport(self)
        return httpx.AsyncClient(transport=transport, base_url=base_url or self.url, **kwargs)

    def sdk(
        self,
        *,
        timeout: float | httpx.Timeout | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> LangGraphClient:
        """The official async SDK client, as ``get_client(url=self.api, api_key=None)``."""
        http = self.ahttp(
            base_url=self.api,
            timeout=SDK_TIMEOUT if timeout is None else timeout,
            headers=dict(headers or {}),
        )
        return LangGraphClient(http)

    def sync_sdk(
        self,
        *,
        timeout: float | httpx.Timeout | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> SyncLangGraphClient:
        http = self.http(
            base_url=self.api,
            timeout=SDK_TIMEOUT if timeout is None else timeout,
            headers=dict(headers or {}),
        )
        return SyncLangGraphClient(http)

    def raw_get(self, target: str, timeout: float = 30.0) -> tuple[int, bytes]:
        """GET with the request target sent byte for byte: (status, body)."""
        return raw_request(self, "GET", target, [], timeout)

    # --- the AppHost protocol (used by the transports) ----------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("the in-process server is not running")
        return self._loop

    @property
    def app(self) -> ASGIApp:
        if self._app is None:
            raise RuntimeError("the in-process server is not running")
        return self._app

    def request_state(self) -> dict[str, Any]:
        return dict(self._lifespan.state) if self._lifespan else {}

    def track(self, exchange: Exchange) -> None:
        self._exchanges.add(exchange)

    def untrack(self, exchange: Exchange) -> None:
        self._exchanges.discard(exchange)

    # --- internals ------------------------------------------------------------------------

    def _call(self, coro: Any, timeout: float) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _shutdown(self) -> None:
        """As uvicorn: let open requests see a disconnect and finish, then the lifespan."""
        for exchange in list(self._exchanges):
            exchange.disconnected.set()
        tasks = [e.task for e in self._exchanges if e.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=30)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=10)
        assert self._lifespan is not None
        with _keep_host_logging():
            await self._lifespan.shutdown()
        current = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not current]
        for task in rest:
            task.cancel()
        if rest:
            await asyncio.wait(rest, timeout=10)
        await asyncio.get_running_loop().shutdown_asyncgens()

    def _stuck(self) -> str:
        """Where the app's loop thread is and what its tasks wait on (for a failure message)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or thread.ident is None:
            return ""
        frame = sys._current_frames().get(thread.ident)
        lines = ["", "loop thread:", *traceback.format_stack(frame)[-8:]] if frame else []
        for _ in range(3):  # the task set may change while it is read from here
            try:
                tasks = list(asyncio.all_tasks(loop))
                break
            except RuntimeError:
                tasks = []
        for task in tasks[:30]:
            where = [
                f"{f.f_code.co_filename}:{f.f_lineno} {f.f_code.co_name}"
                for f in task.get_stack(limit=4)
            ]
            lines.append(f"task {task.get_name()}: {' <- '.join(where)}")
        if self._log is not None:
            lines += ["last log lines:", *self._log.lines[-20:]]
        return "\n".join(lines)

    def _halt(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
            if not thread.is_alive():
                loop.close()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        if self._log is not None:
            logging.getLogger("pronghorn").removeHandler(self._log)
        self._loop = self._thread = self._app = self._lifespan = None
        self._executor = None
        self._exchanges = set()

    def _attach_log(self, thread_prefix: str, level: str) -> None:
        # keep the lines of earlier starts (a restart's logs() shows both, as a log file)
        handler = _ServerLog(thread_prefix)
        if self._log is not None:
            handler.lines = self._log.lines
        self._log = handler
        logger = logging.getLogger("pronghorn")
        logger.setLevel(level.upper())
        logger.addHandler(handler)
