"""A thread record as the API's Thread JSON: the one mapping, for every way a thread is
answered (the threads service, the thread search)."""

from __future__ import annotations

from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos.common import iso


def thread_json(thread: ThreadRecord, *, include_ttl: bool = False) -> dict[str, object]:
    """The Thread JSON; ``ttl`` (``{strategy, ttl_minutes, expires_at}``) only when asked."""
    out: dict[str, object] = {  # JSON for the router to answer, values as stored
        "thread_id": thread.thread_id,
        "created_at": iso(thread.created_at),
        "updated_at": iso(thread.updated_at),
        "state_updated_at": iso(thread.state_updated_at),
        "metadata": thread.metadata,
        "status": thread.status,
        "config": thread.config,
        "values": thread.values if thread.values is not None else {},
        "interrupts": thread.interrupts,
        "error": thread.error,
    }
    if include_ttl and thread.ttl is not None:
        out["ttl"] = {
            "strategy": thread.ttl.get("strategy", "delete"),
            "ttl_minutes": thread.ttl.get("ttl"),
            "expires_at": iso(thread.expires_at),
        }
    return out
