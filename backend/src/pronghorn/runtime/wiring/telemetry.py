"""The telemetry component (metrics hooks, the tracer provider) and how runs are
instrumented with it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from langchain_core.callbacks import BaseCallbackHandler

from pronghorn.config.schema.app import AppConfig
from pronghorn.runtime.engine.jobs import Job
from pronghorn.runtime.engine.run_hooks import RunHooks
from pronghorn.runtime.observability.metrics_callback import MetricsCallback
from pronghorn.runtime.observability.trace_vendors import VendorCallbacks, check_vendors
from pronghorn.runtime.observability.tracing import Tracing
from pronghorn.runtime.wiring.app_runtime import AppRuntime


@contextlib.asynccontextmanager
async def telemetry(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    """Count config reloads, start the tracer provider (a no-op without an endpoint) and
    check the tracing vendors; at shutdown export the spans still buffered."""
    config = runtime.config
    check_vendors(config.tracing)
    metrics = runtime.metrics

    def applied(old: AppConfig, new: AppConfig) -> None:
        metrics.config_reloads.labels("applied").inc()

    def refused(message: str) -> None:
        metrics.config_reloads.labels("invalid").inc()

    unsubscribe = [runtime.settings.add_listener(applied)]
    unsubscribe.append(runtime.settings.add_failure_listener(refused))
    tracing = Tracing(config.tracing)
    runtime.tracing = tracing
    runtime.vendor_callbacks = VendorCallbacks()
    try:
        yield
    finally:
        for remove in unsubscribe:
            remove()
        await tracing.aclose()
        metrics.close()
        await asyncio.to_thread(runtime.vendor_callbacks.close)


def telemetry_hooks(runtime: AppRuntime) -> RunHooks:
    """The metrics and tracing callbacks and the run span of every run; counts the settles
    waiting for the database."""
    metrics = runtime.metrics
    tracing = runtime.tracing
    vendors = runtime.vendor_callbacks

    def callbacks(job: Job) -> list[BaseCallbackHandler]:
        return [MetricsCallback(metrics), *tracing.callbacks(job), *vendors(job)]

    runtime.db.outage_waits.listeners.append(metrics.run_settles_waiting.inc)
    return RunHooks(callbacks=(callbacks,), scopes=(tracing.run_span,))
