"""OpenTelemetry traces, off unless `tracing.otlp.endpoint` is set.

The AppRuntime owns its own `TracerProvider` (never OpenTelemetry's global one), exporting by
OTLP/HTTP in batches from the SDK's worker thread; without an endpoint every tracer is a
no-op and nothing is recorded. Spans: one per HTTP request (gateway/http_observer.py), one
per run (here, around its execution), and one per graph node, model call and tool call
(runtime/observability/trace_callback.py), each carrying the run and thread ids.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from pronghorn import __version__
from pronghorn.config.schema.ops import TracingConfig
from pronghorn.runtime.observability.trace_callback import TraceCallback

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from pronghorn.runtime.engine.jobs import Job

RUN_ID = "pronghorn.run_id"
THREAD_ID = "pronghorn.thread_id"
ASSISTANT_ID = "pronghorn.assistant_id"
GRAPH_ID = "pronghorn.graph_id"


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of a collector base URL (kept when it already names it)."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


def job_attributes(job: Job) -> dict[str, str]:
    return {
        RUN_ID: job.run_id,
        THREAD_ID: job.thread_id,
        ASSISTANT_ID: job.assistant.assistant_id,
        GRAPH_ID: job.assistant.graph_id,
    }


class Tracing:
    def __init__(self, config: TracingConfig) -> None:
        self.provider: TracerProvider | None = None
        self.tracer: Tracer = trace.NoOpTracer()
        self._handlers: dict[str, TraceCallback] = {}
        endpoint = config.otlp.endpoint
        if endpoint is None:
            return
        # The SDK and the OTLP exporter (protobuf under it): only when tracing is on.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

        exporter = OTLPSpanExporter(
            endpoint=traces_url(endpoint),
            headers={k: v.get_secret_value() for k, v in config.otlp.headers.items()},
            timeout=config.otlp.timeout_s,
        )
        self.provider = TracerProvider(
            resource=Resource.create(
                {"service.name": config.service_name, "service.version": __version__}
            ),
            sampler=ParentBased(TraceIdRatioBased(config.sample_ratio)),
        )
        self.provider.add_span_processor(BatchSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("pronghorn", __version__)

    @property
    def enabled(self) -> bool:
        return self.provider is not None

    async def flush(self) -> None:
        if self.provider is not None:
            await asyncio.to_thread(self.provider.force_flush)

    async def aclose(self) -> None:
        """Export what is buffered and stop the exporter (off the event loop)."""
        if self.provider is not None:
            provider, self.provider = self.provider, None
            await asyncio.to_thread(provider.shutdown)

    @contextlib.contextmanager
    def run_span(self, job: Job) -> Generator[None]:
        """The span of one run's execution, current while it executes (its log lines and
        its graph's spans belong to it)."""
        if not self.enabled:
            yield
            return
        with self.tracer.start_as_current_span(
            "run", kind=SpanKind.INTERNAL, attributes=job_attributes(job)
        ) as span:
            span.set_attribute("pronghorn.run.attempt", job.attempt)
            try:
                yield
            finally:
                handler = self._handlers.pop(job.run_id, None)
                if handler is not None:
                    handler.close()
            span.set_attribute("pronghorn.run.status", job.status)
            if job.error is not None:
                span.set_status(Status(StatusCode.ERROR, str(job.error.get("message", ""))))

    def callbacks(self, job: Job) -> list[TraceCallback]:
        """The span-making handler of a run, under its run span (called inside it)."""
        if not self.enabled:
            return []
        handler = TraceCallback(self.tracer, trace.get_current_span(), job_attributes(job))
        self._handlers[job.run_id] = handler
        return [handler]
