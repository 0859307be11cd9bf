"""Structured logging with the request id and run id on every line."""

from __future__ import annotations

import json
import logging
import sys
import time

from opentelemetry import trace

from pronghorn.runtime.observability.log_context import request_id_var, run_id_var

_STD_ATTRS = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        if not getattr(record, "run_id", None):
            record.run_id = run_id_var.get()
        # The trace this line belongs to (tracing.otlp on): find it in the trace backend.
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            record.trace_id = format(context.trace_id, "032x")
            record.span_id = format(context.span_id, "016x")
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STD_ATTRS and value is not None:
                out[key] = value if isinstance(value, (str, int, float, bool)) else str(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        extras = [
            f"{k}={v}" for k, v in record.__dict__.items() if k not in _STD_ATTRS and v is not None
        ]
        return f"{base} {' '.join(extras)}".rstrip()


def configure_logging(level: str = "INFO", fmt: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    # alembic.runtime.plugins: since alembic is imported only to migrate (after logging is
    # set up), its plugin registry would log a line per plugin at every start.
    quiet = ("httpx", "httpcore", "aiosqlite", "watchfiles", "sse_starlette")
    for noisy in (*quiet, "alembic.runtime.plugins"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
