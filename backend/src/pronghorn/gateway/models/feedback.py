"""Run feedback (thumbs up or down with a comment)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Feedback(BaseModel):
    feedback_id: str
    run_id: str
    thread_id: str
    user_id: str
    message_id: str | None
    rating: Literal[1, -1]
    comment: str | None
    created_at: str | None
    updated_at: str | None


class ThreadFeedback(BaseModel):
    feedback: list[Feedback]
