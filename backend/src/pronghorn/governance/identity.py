"""Who and what a model or tool call belongs to, read from the run's config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast


@dataclass(frozen=True, slots=True)
class CallIdentity:
    run_id: str
    thread_id: str
    owner_id: str


# A LangChain RunnableConfig (a TypedDict of free-form values) or a plain mapping.
def identity_of(config: Mapping[str, object] | None) -> CallIdentity:
    """The run, thread and owner a call runs for (the executor puts them in
    ``configurable``; a graph run by hand falls back to the thread and ``user_id``)."""
    raw: object = (config or {}).get("configurable") or {}
    conf: Mapping[str, object] = cast(Mapping[str, object], raw) if isinstance(raw, Mapping) else {}
    thread_id = str(conf.get("thread_id") or "")
    run_id = str(conf.get("run_id") or thread_id or "")
    owner = conf.get("langgraph_auth_user_id") or conf.get("user_id") or "local"
    return CallIdentity(run_id=run_id, thread_id=thread_id, owner_id=str(owner))
