"""A local OpenTelemetry collector stand-in: OTLP/HTTP (protobuf) on a free 127.0.0.1 port.

It accepts `POST /v1/traces` bodies (`ExportTraceServiceRequest`), decodes them with
opentelemetry-proto and keeps every span, flattened, for the test to assert on:

    with FakeCollector() as collector:
        ...  # tracing.otlp.endpoint: collector.base_url
        spans = collector.spans  # [CollectedSpan(name, span_id, parent_id, attributes, ...)]
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@dataclass
class CollectedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    status_code: int
    attributes: dict[str, Any]
    resource: dict[str, Any]


@dataclass
class FakeCollector:
    spans: list[CollectedSpan] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _record(self, body: bytes, headers: dict[str, str]) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.headers.append(headers)
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        CollectedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            status_code=span.status.code,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            resource=resource,
                        )
                    )

    def __enter__(self) -> FakeCollector:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                collector._record(body, {k.lower(): v for k, v in self.headers.items()})
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)
