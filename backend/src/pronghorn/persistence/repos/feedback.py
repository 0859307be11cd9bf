"""Run feedback: a thumbs up (+1) or down (-1) with an optional comment, one per user and
run."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from pronghorn.persistence.repos.common import iso, new_id, now
from pronghorn.persistence.tables import run_feedback


def to_api(row: Any) -> dict[str, Any]:
    m = row._mapping
    return {
        "feedback_id": m["feedback_id"],
        "run_id": m["run_id"],
        "thread_id": m["thread_id"],
        "user_id": m["user_id"],
        "message_id": m["message_id"],
        "rating": m["rating"],
        "comment": m["comment"],
        "created_at": iso(m["created_at"]),
        "updated_at": iso(m["updated_at"]),
    }


def get(conn: Connection, run_id: str, user_id: str) -> dict[str, Any] | None:
    row = (
        conn.execute(
            select(run_feedback).where(
                run_feedback.c.run_id == run_id, run_feedback.c.user_id == user_id
            )
        )
    ).first()
    return to_api(row) if row is not None else None


def upsert(
    conn: Connection,
    *,
    run_id: str,
    thread_id: str,
    user_id: str,
    rating: int,
    comment: str | None,
    message_id: str | None,
) -> dict[str, Any]:
    at = now()
    found = get(conn, run_id, user_id)
    if found is None:
        conn.execute(
            insert(run_feedback).values(
                feedback_id=new_id(),
                run_id=run_id,
                thread_id=thread_id,
                user_id=user_id,
                message_id=message_id,
                rating=rating,
                comment=comment,
                created_at=at,
                updated_at=at,
            )
        )
    else:
        conn.execute(
            update(run_feedback)
            .where(run_feedback.c.feedback_id == found["feedback_id"])
            .values(rating=rating, comment=comment, message_id=message_id, updated_at=at)
        )
    result = get(conn, run_id, user_id)
    if result is None:  # pragma: no cover - written just above in the same transaction
        raise LookupError(f"feedback of run {run_id} vanished")
    return result


def remove(conn: Connection, run_id: str, user_id: str) -> bool:
    result = conn.execute(
        delete(run_feedback).where(
            run_feedback.c.run_id == run_id, run_feedback.c.user_id == user_id
        )
    )
    return bool(result.rowcount)


def for_thread(conn: Connection, thread_id: str, user_id: str) -> list[dict[str, Any]]:
    rows = (
        conn.execute(
            select(run_feedback)
            .where(run_feedback.c.thread_id == thread_id, run_feedback.c.user_id == user_id)
            .order_by(run_feedback.c.created_at)
        )
    ).all()
    return [to_api(r) for r in rows]
