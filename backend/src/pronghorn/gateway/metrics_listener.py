"""`metrics.port`: /metrics on a listener of its own (e.g. an interface only Prometheus
reaches), served from a thread by the standard library's WSGI server, as prometheus_client
itself does. It asks for `metrics.token` when one is set, and nothing else.

With several workers each tries the port; the first binds it and, the values being shared
through PROMETHEUS_MULTIPROC_DIR, it answers for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Iterable
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from pronghorn.gateway.routers.metrics import token_matches
from pronghorn.runtime.observability.metrics import CONTENT_TYPE
from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.metrics")

StartResponse = Callable[[str, list[tuple[str, str]]], object]


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


WsgiApp = Callable[[dict[str, object], StartResponse], Iterable[bytes]]


def metrics_wsgi_app(runtime: AppRuntime) -> WsgiApp:
    def app(environ: dict[str, object], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") not in ("/metrics", "/"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"Not Found\n"]
        token = runtime.config.metrics.token
        if token is not None:
            scheme, _, given = str(environ.get("HTTP_AUTHORIZATION", "")).partition(" ")
            if scheme.lower() != "bearer" or not token_matches(
                given.strip() or None, token.get_secret_value()
            ):
                start_response(
                    "401 Unauthorized",
                    [("Content-Type", "text/plain"), ("WWW-Authenticate", "Bearer")],
                )
                return [b"A valid metrics token is required\n"]
        start_response("200 OK", [("Content-Type", CONTENT_TYPE)])
        return [runtime.metrics.render()]

    return app


@contextlib.asynccontextmanager
async def metrics_listener(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    cfg = runtime.config.metrics
    if not cfg.enabled or cfg.port is None:
        yield
        return
    app = metrics_wsgi_app(runtime)
    try:
        httpd = await asyncio.to_thread(
            make_server, cfg.host, cfg.port, app, _Server, _QuietHandler
        )
    except OSError as exc:
        if runtime.config.server.workers > 1:
            log.info("metrics.port is served by another worker", extra={"port": cfg.port})
            yield
            return
        raise RuntimeError(f"metrics.port {cfg.port} on {cfg.host}: {exc}") from exc
    thread = threading.Thread(target=httpd.serve_forever, name="metrics-listener", daemon=True)
    thread.start()
    log.info("metrics listening", extra={"host": cfg.host, "port": cfg.port})
    try:
        yield
    finally:
        await asyncio.to_thread(httpd.shutdown)
        httpd.server_close()
