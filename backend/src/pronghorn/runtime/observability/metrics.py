"""The Prometheus series Pronghorn exports, in a registry owned by the AppRuntime.

Each AppRuntime has its own `CollectorRegistry` (never prometheus_client's global one), so two
apps in one process (tests) count apart. With `server.workers > 1` the CLI sets
`PROMETHEUS_MULTIPROC_DIR`: prometheus_client then writes every value to per-process files
and `render` aggregates them across workers (process metrics are per process and not
collected in that mode; gauges sum over the live workers).

Labels are bounded by construction: HTTP routes are the matched route templates, models
and tools are names from the config and the agent's tool list, statuses are fixed sets.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import cast

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as prom_multiprocess
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST

RUN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
WAIT_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def prepare_multiprocess(default_dir: Path) -> Path:
    """Before the workers start (`pronghorn serve`, workers > 1): point
    PROMETHEUS_MULTIPROC_DIR at an empty folder (the operator's, or `default_dir`), so the
    workers share their values and stale files of a previous start count for nothing."""
    path = Path(os.environ.get(MULTIPROC_ENV) or default_dir)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
    os.environ[MULTIPROC_ENV] = str(path)
    return path


class Metrics:
    def __init__(self) -> None:
        self.multiprocess = multiprocess_dir() is not None
        self.registry = CollectorRegistry(auto_describe=True)
        if not self.multiprocess:
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
        r = self.registry
        self.runs_total = Counter(
            "pronghorn_runs_total", "Runs finished, by final status.", ["status"], registry=r
        )
        self.runs_active = Gauge(
            "pronghorn_runs_active", "Runs executing now.", registry=r, multiprocess_mode="livesum"
        )
        self.runs_queued = Gauge(
            "pronghorn_runs_queued",
            "Runs accepted and waiting for their slot.",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.run_settles_waiting = Gauge(
            "pronghorn_run_settles_waiting",
            "Writes of runs (last checkpoints, settles) waiting for the database to be back.",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.run_duration = Histogram(
            "pronghorn_run_duration_seconds",
            "Execution time of a run (from its start to its final state).",
            buckets=RUN_BUCKETS,
            registry=r,
        )
        self.queue_wait = Histogram(
            "pronghorn_run_queue_wait_seconds",
            "Time a run waited for its slot (thread order, per-user and global caps).",
            buckets=WAIT_BUCKETS,
            registry=r,
        )
        self.runs_refused = Counter(
            "pronghorn_runs_refused_total",
            "Run creations refused by admission control, by cap.",
            ["reason"],
            registry=r,
        )
        self.http_requests = Counter(
            "pronghorn_http_requests_total",
            "HTTP requests, by route template, method and status.",
            ["route", "method", "status"],
            registry=r,
        )
        self.http_duration = Histogram(
            "pronghorn_http_request_duration_seconds",
            "Time to the end of the response, by route template (SSE: the whole stream).",
            ["route"],
            buckets=HTTP_BUCKETS,
            registry=r,
        )
        self.sse_connections = Gauge(
            "pronghorn_sse_connections",
            "Open server-sent-event streams.",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.llm_requests = Counter(
            "pronghorn_llm_requests_total",
            "Chat model calls, by model and status (ok, error).",
            ["model", "status"],
            registry=r,
        )
        self.llm_tokens = Counter(
            "pronghorn_llm_tokens_total",
            "Tokens of chat model calls, by model and kind (input, output).",
            ["model", "kind"],
            registry=r,
        )
        self.model_fallbacks = Counter(
            "pronghorn_model_fallbacks_total",
            "Model calls handed to the next model of a fallback chain, by model and reason.",
            ["from_model", "to_model", "reason"],
            registry=r,
        )
        self.tool_calls = Counter(
            "pronghorn_tool_calls_total",
            "Tool calls, by tool and status (ok, error).",
            ["tool", "status"],
            registry=r,
        )
        self.config_reloads = Counter(
            "pronghorn_config_reloads_total",
            "Config file reloads, by result (applied, invalid).",
            ["result"],
            registry=r,
        )
        self.rate_limited = Counter(
            "pronghorn_rate_limited_total",
            "Requests refused by the per-user rate limit.",
            registry=r,
        )

    def close(self) -> None:
        """This worker is stopping: its live gauges (runs active, SSE streams) stop counting."""
        if self.multiprocess:
            mark_dead = cast("Callable[[int], None]", prom_multiprocess.mark_process_dead)
            mark_dead(os.getpid())

    def render(self) -> bytes:
        """The text exposition of this registry, or of every worker's files in multiprocess
        mode."""
        if self.multiprocess:
            merged = CollectorRegistry()
            prom_multiprocess.MultiProcessCollector(merged)
            return generate_latest(merged)
        return generate_latest(self.registry)
