"""Run feedback: a thumbs up (+1) or down (-1) with an optional comment, one per user and
run."""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, RowMapping

from pronghorn.persistence.errors import FeedbackMissing
from pronghorn.persistence.records.feedback import FeedbackRecord
from pronghorn.persistence.repos.common import new_id, now
from pronghorn.persistence.tables import run_feedback


def _record(row: RowMapping) -> FeedbackRecord:
    return FeedbackRecord(
        feedback_id=row["feedback_id"],
        run_id=row["run_id"],
        thread_id=row["thread_id"],
        user_id=row["user_id"],
        message_id=row["message_id"],
        rating=row["rating"],
        comment=row["comment"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def get(conn: Connection, run_id: str, user_id: str) -> FeedbackRecord | None:
    """`user_id`'s feedback on the run (None when they gave none)."""
    row = (
        (
            conn.execute(
                select(run_feedback).where(
                    run_feedback.c.run_id == run_id, run_feedback.c.user_id == user_id
                )
            )
        )
        .mappings()
        .first()
    )
    return _record(row) if row is not None else None


def upsert(
    conn: Connection,
    *,
    run_id: str,
    thread_id: str,
    user_id: str,
    rating: int,
    comment: str | None,
    message_id: str | None,
) -> FeedbackRecord:
    """Set `user_id`'s feedback on the run (replacing an earlier one) and return it."""
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
            .where(run_feedback.c.feedback_id == found.feedback_id)
            .values(rating=rating, comment=comment, message_id=message_id, updated_at=at)
        )
    result = get(conn, run_id, user_id)
    if result is None:  # pragma: no cover - written just above in the same transaction
        raise FeedbackMissing(run_id, user_id)
    return result


def remove(conn: Connection, run_id: str, user_id: str) -> None:
    """Remove `user_id`'s feedback on the run; `FeedbackMissing` when there is none."""
    result = conn.execute(
        delete(run_feedback).where(
            run_feedback.c.run_id == run_id, run_feedback.c.user_id == user_id
        )
    )
    if not result.rowcount:
        raise FeedbackMissing(run_id, user_id)


def for_thread(conn: Connection, thread_id: str, user_id: str) -> list[FeedbackRecord]:
    """`user_id`'s feedback on the thread's runs, oldest first."""
    rows = (
        conn.execute(
            select(run_feedback)
            .where(run_feedback.c.thread_id == thread_id, run_feedback.c.user_id == user_id)
            .order_by(run_feedback.c.created_at)
        )
    ).mappings()
    return [_record(r) for r in rows]
