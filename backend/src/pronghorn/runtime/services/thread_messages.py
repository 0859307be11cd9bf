"""A thread's messages numbered and attributed to the run that added them, for the
DeerFlow-style message pages (``/api/threads/{id}/messages/page``, per-run messages).

The messages are the thread's current state (its cached values); ``seq`` is a message's
1-based position in it, and its ``run_id`` is the first run whose checkpoints hold it
(checkpoint metadata carries the run id)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from langchain_core.runnables import RunnableConfig

from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos import run_units
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import NotFound
from pronghorn.runtime.events.serialization import to_jsonable
from pronghorn.runtime.owned import authorize, visible
from pronghorn.runtime.record_api import run_api

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

CATEGORY = "message"
EVENT_TYPES = {"human": "llm.human.input", "ai": "llm.ai.response", "tool": "llm.tool.result"}


@dataclass(frozen=True, slots=True)
class Page:
    data: list[dict[str, object]]
    has_more: bool


def _message_id(message: object) -> str | None:
    if isinstance(message, Mapping):
        value = cast(Mapping[str, object], message).get("id")
    else:
        value = getattr(message, "id", None)
    return value if isinstance(value, str) else None


async def _runs_of_messages(runtime: AppRuntime, thread_id: str) -> dict[str, str]:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    items = [t async for t in runtime.checkpointer.alist(config)]
    found: dict[str, str] = {}
    for item in reversed(items):  # oldest first
        if item.config.get("configurable", {}).get("checkpoint_ns"):
            continue
        run_id = (item.metadata or {}).get("run_id")
        if not isinstance(run_id, str):
            continue
        values = item.checkpoint.get("channel_values") or {}
        for message in cast(Sequence[object], values.get("messages") or []):
            mid = _message_id(message)
            if mid is not None:
                found.setdefault(mid, run_id)
    return found


async def thread_messages(runtime: AppRuntime, row: ThreadRecord) -> list[dict[str, object]]:
    """Every message of the thread as a DeerFlow message event, oldest first."""
    thread_id = row.thread_id
    values: object = row.values or {}
    messages: list[object] = []
    if isinstance(values, Mapping):
        raw = cast(Mapping[str, object], values).get("messages")
        messages = cast(list[object], raw) if isinstance(raw, list) else []
    runs = await _runs_of_messages(runtime, thread_id) if messages else {}
    out: list[dict[str, object]] = []
    for i, message in enumerate(messages, start=1):
        body = to_jsonable(message)
        kind = (
            str(cast(Mapping[str, object], body).get("type")) if isinstance(body, Mapping) else ""
        )
        mid = _message_id(message)
        out.append(
            {
                "seq": i,
                "thread_id": thread_id,
                "run_id": runs.get(mid) if mid else None,
                "event_type": EVENT_TYPES.get(kind, f"llm.{kind}.message"),
                "category": CATEGORY,
                "content": body,
                "metadata": {},
                "created_at": None,
            }
        )
    return out


def _seq(item: Mapping[str, object]) -> int:
    """A message event's `seq` (`thread_messages` numbers every one)."""
    seq = item["seq"]
    assert isinstance(seq, int)
    return seq


def page_before(items: list[dict[str, object]], *, limit: int, before_seq: int | None) -> Page:
    """The last `limit` items with seq < before_seq (all when None), oldest first."""
    eligible = [m for m in items if before_seq is None or _seq(m) < before_seq]
    chosen = eligible[-limit:] if limit else []
    return Page(chosen, has_more=len(eligible) > len(chosen))


def page_window(
    items: list[dict[str, object]], *, limit: int, before_seq: int | None, after_seq: int | None
) -> Page:
    """Items after `after_seq` (first `limit`), else before `before_seq` (last `limit`)."""
    if after_seq is not None:
        eligible = [m for m in items if _seq(m) > after_seq]
        if before_seq is not None:
            eligible = [m for m in eligible if _seq(m) < before_seq]
        return Page(eligible[:limit], has_more=len(eligible) > limit)
    return page_before(items, limit=limit, before_seq=before_seq)


async def load_run(
    runtime: AppRuntime, access: Access, thread_id: str | None, run_id: str
) -> dict[str, object]:
    """The run (of that thread, when given) if `access` may read its thread; NotFound
    otherwise."""
    filt = await authorize(
        runtime, access, "threads", "read", {"thread_id": thread_id, "run_id": run_id}
    )
    found = await runtime.db.write(lambda conn: run_units.get_owned_run(conn, run_id, thread_id))
    if found is None or not visible(access, found.owner_id, found.thread_metadata, filt):
        raise NotFound.of("Run", run_id)
    return run_api(found.run)
