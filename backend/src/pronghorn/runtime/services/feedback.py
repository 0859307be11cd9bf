"""Run feedback as a service: a user's thumbs up or down (with a comment) on a run of a
thread they may see, one per user and run (the feedback router maps the results)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pronghorn.persistence.records.feedback import FeedbackRecord
from pronghorn.persistence.repos import feedback as repo
from pronghorn.persistence.repos.common import iso
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import refusals_mapped
from pronghorn.runtime.owned import load_thread
from pronghorn.runtime.services.thread_messages import load_run

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


def feedback_json(feedback: FeedbackRecord) -> dict[str, object]:
    """The feedback as the API answers it: the one mapping, for every answer here
    (JSON for the router to answer)."""
    return {
        "feedback_id": feedback.feedback_id,
        "run_id": feedback.run_id,
        "thread_id": feedback.thread_id,
        "user_id": feedback.user_id,
        "message_id": feedback.message_id,
        "rating": feedback.rating,
        "comment": feedback.comment,
        "created_at": iso(feedback.created_at),
        "updated_at": iso(feedback.updated_at),
    }


async def put(
    runtime: AppRuntime,
    access: Access,
    thread_id: str,
    run_id: str,
    *,
    rating: int,
    comment: str | None,
    message_id: str | None,
) -> dict[str, object]:
    """Set the caller's feedback on the run (replacing an earlier one)."""
    await load_run(runtime, access, thread_id, run_id)
    with refusals_mapped():
        saved = await runtime.db.write(
            lambda conn: repo.upsert(
                conn,
                run_id=run_id,
                thread_id=thread_id,
                user_id=access.identity,
                rating=rating,
                comment=comment,
                message_id=message_id,
            )
        )
    return feedback_json(saved)


async def get(
    runtime: AppRuntime, access: Access, thread_id: str, run_id: str
) -> dict[str, object] | None:
    """The caller's feedback on the run (None when they gave none)."""
    await load_run(runtime, access, thread_id, run_id)
    found = await runtime.db.read(lambda conn: repo.get(conn, run_id, access.identity))
    return None if found is None else feedback_json(found)


async def remove(runtime: AppRuntime, access: Access, thread_id: str, run_id: str) -> None:
    """Remove the caller's feedback on the run; `NotFound` when there is none."""
    await load_run(runtime, access, thread_id, run_id)
    with refusals_mapped():
        await runtime.db.write(lambda conn: repo.remove(conn, run_id, access.identity))


async def for_thread(
    runtime: AppRuntime, access: Access, thread_id: str
) -> list[dict[str, object]]:
    """The caller's feedback on every run of the thread."""
    await load_thread(runtime, access, thread_id)
    found = await runtime.db.read(lambda conn: repo.for_thread(conn, thread_id, access.identity))
    return [feedback_json(feedback) for feedback in found]
