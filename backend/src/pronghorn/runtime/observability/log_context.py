"""The context a log line is written in: the request and the run it belongs to.

The runtime sets `run_id_var` while it executes a run and the gateway sets `request_id_var`
per request; the gateway's log filter (gateway/logs.py) puts both on every record.
"""

from __future__ import annotations

import contextvars

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)
run_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("run_id", default=None)
