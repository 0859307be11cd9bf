"""Threads waiting on a tool approval for longer than a timeout (approval sweeper)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.engine import Connection

from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.tables import runs, threads

APPROVAL = "tool_approval"


@dataclass(frozen=True, slots=True)
class ApprovalWait:
    thread_id: str
    pending: list[tuple[str, str]]  # (interrupt id, tool call id) of each open approval
    assistant_id: str
    owner_id: str | None
    principal: object
    # Any: the stored run request (JSON), validated again by the RunCreate made from it
    run_kwargs: Mapping[str, Any]


def _pending(interrupts: object) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if not isinstance(interrupts, Mapping):
        return out
    for items in cast(Mapping[str, object], interrupts).values():
        for item in cast(list[object], items) if isinstance(items, list) else []:
            if not isinstance(item, Mapping):
                continue
            entry = cast(Mapping[str, object], item)
            value, iid = entry.get("value"), entry.get("id")
            if isinstance(value, Mapping) and isinstance(iid, str):
                v = cast(Mapping[str, object], value)
                if v.get("type") == APPROVAL and isinstance(v.get("call_id"), str):
                    out.append((iid, str(v["call_id"])))
    return out


def overdue(conn: Connection, *, before: datetime, limit: int = 100) -> list[ApprovalWait]:
    """Interrupted threads last changed before `before` whose pending interrupts include a
    tool approval, with the assistant, owner and principal of their latest run."""
    rows = (
        conn.execute(
            select(threads.c.thread_id, threads.c.interrupts)
            .where(threads.c.status == "interrupted", threads.c.state_updated_at < before)
            .order_by(threads.c.state_updated_at)
            .limit(limit)
        )
    ).all()
    out: list[ApprovalWait] = []
    for thread_id, interrupts in rows:
        ids = _pending(interrupts)
        if not ids:
            continue
        last = (
            conn.execute(
                select(runs.c.assistant_id, runs.c.owner_id, runs.c.principal, runs.c.kwargs)
                .where(runs.c.thread_id == thread_id)
                .order_by(runs.c.created_at.desc())
                .limit(1)
            )
        ).first()
        if last is None:
            continue
        out.append(
            ApprovalWait(
                thread_id=thread_id,
                pending=ids,
                assistant_id=str(last[0]),
                owner_id=last[1],
                principal=last[2],
                run_kwargs=json_object(last[3]) or {},
            )
        )
    return out
