"""Per-request metrics and trace spans (pure ASGI, so streaming is untouched).

The route label is the template of the route that matched (`/api/threads/{thread_id}`),
read from the scope after routing, never the raw path: ids never become label values.
A request no route matched is labelled `unmatched`; the web UI's static files `static`.
A response of type `text/event-stream` counts as an open SSE connection until it ends.
The span continues a caller's W3C `traceparent` and is current while the route runs, so
the runs it creates and the log lines it writes carry its trace id.
"""

from __future__ import annotations

import time

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pronghorn.runtime.observability.metrics import Metrics
from pronghorn.runtime.observability.tracing import Tracing

PROPAGATOR = TraceContextTextMapPropagator()


def route_label(scope: Scope) -> str:
    route = scope.get("route")
    if route is None:
        return "unmatched"
    inner = getattr(route, "route", None)  # a custom app's route (gateway/custom_app.py)
    if isinstance(inner, BaseRoute):
        route = inner
    if isinstance(route, Mount):
        return "static"
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return str(path) if path else "unmatched"


def _headers(scope: Scope) -> dict[str, str]:
    return {
        k.decode("latin-1"): v.decode("latin-1")
        for k, v in scope.get("headers", ())
        if k in (b"traceparent", b"tracestate")
    }


class HttpObserverMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        runtime = getattr(scope["app"].state, "runtime", None)
        if runtime is None:  # not started (or already stopped): nothing to record into
            await self.app(scope, receive, send)
            return
        metrics: Metrics = runtime.metrics
        tracing: Tracing = runtime.tracing
        method: str = scope["method"]
        status = 500
        streaming = False
        started = time.perf_counter()

        async def observed_send(message: Message) -> None:
            nonlocal status, streaming
            if message["type"] == "http.response.start":
                status = int(message["status"])
                for key, value in message.get("headers", ()):
                    if key.lower() == b"content-type" and value.startswith(b"text/event-stream"):
                        streaming = True
                        metrics.sse_connections.inc()
            await send(message)

        span = None
        if tracing.enabled:
            parent = PROPAGATOR.extract(_headers(scope))
            span = tracing.tracer.start_span(
                method,
                context=parent,
                kind=SpanKind.SERVER,
                attributes={"http.request.method": method, "url.path": scope.get("path", "")},
            )
        try:
            if span is None:
                await self.app(scope, receive, observed_send)
            else:
                with trace.use_span(span, end_on_exit=False, record_exception=True):
                    await self.app(scope, receive, observed_send)
        finally:
            route = route_label(scope)
            if streaming:
                metrics.sse_connections.dec()
            metrics.http_requests.labels(route, method, str(status)).inc()
            metrics.http_duration.labels(route).observe(time.perf_counter() - started)
            if span is not None:
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
                span.end()
