"""Small helpers shared by the middlewares (run identity, request-only notes)."""

from __future__ import annotations

from dataclasses import dataclass

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

from pronghorn.agent.untyped import as_list, as_mapping


@dataclass(frozen=True)
class RunIds:
    user_id: str
    thread_id: str | None
    run_id: str | None


def run_config() -> RunnableConfig:
    """The current run's config (``get_config()`` inside a node); empty outside a graph run."""
    try:
        return get_config()
    except RuntimeError:
        return {}


def run_ids(config: object = None) -> RunIds:
    """Who and where this run is, from the run config (``run_config()`` by default)."""
    if config is None:
        config = run_config()
    conf = as_mapping((as_mapping(config) or {}).get("configurable")) or {}
    thread = conf.get("thread_id")
    run = conf.get("run_id")
    return RunIds(
        user_id=str(conf.get("user_id") or "default"),
        thread_id=str(thread) if thread is not None else None,
        run_id=str(run) if run is not None else None,
    )


def text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in as_list(content) or []:
        fields = as_mapping(block)
        text = fields.get("text") if fields is not None else block
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)


def with_system_note(request: ModelRequest, note: str) -> ModelRequest:
    """A copy of ``request`` whose system message ends with ``note`` (request-only: the
    system message is the one place every provider accepts extra instructions)."""
    base = request.system_message
    text = text_of(base) if base is not None else ""
    joined = f"{text}\n\n{note}" if text else note
    return request.override(system_message=SystemMessage(content=joined))
