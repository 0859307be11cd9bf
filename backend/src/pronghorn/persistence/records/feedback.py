"""A run's feedback as the feedback repository returns it (persistence/repos/feedback.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class FeedbackRecord:
    """One `run_feedback` row: `user_id`'s rating of run `run_id` (+1 or -1), with an
    optional comment and the message it was given on. Timestamps are as the database
    gives them (naive on SQLite: read them through `repos.common.as_utc`)."""

    feedback_id: str
    run_id: str
    thread_id: str
    user_id: str
    message_id: str | None
    rating: int
    comment: str | None
    created_at: datetime
    updated_at: datetime
