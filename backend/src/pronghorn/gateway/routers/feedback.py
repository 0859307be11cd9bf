"""Run feedback: ``PUT/GET/DELETE /api/threads/{id}/runs/{run_id}/feedback`` (thumbs up or
down with a comment, one per user and run; DeerFlow's shape) and the thread's feedback for
the UI (``GET /api/threads/{id}/feedback``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pronghorn.gateway.deps import check_uuid, get_access, get_runtime
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.feedback import Feedback, ThreadFeedback
from pronghorn.gateway.responses import JSONResponse
from pronghorn.gateway.strict_json import StrictJSONRoute
from pronghorn.runtime.access import Access
from pronghorn.runtime.services import feedback
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(
    prefix="/api/threads/{thread_id}", tags=["feedback"], route_class=StrictJSONRoute
)

MAX_COMMENT = 4000


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rating: int = Field(description="+1 (thumbs up) or -1 (thumbs down).")
    comment: str | None = Field(default=None, max_length=MAX_COMMENT)
    message_id: str | None = Field(default=None, max_length=255)

    @field_validator("rating")
    @classmethod
    def _thumbs(cls, value: int) -> int:
        if value not in (1, -1):
            raise ValueError("rating must be 1 or -1")
        return value


def _run_ids(thread_id: str, run_id: str) -> tuple[str, str]:
    return check_uuid(thread_id, "thread"), check_uuid(run_id, "run")


@router.put("/runs/{run_id}/feedback", response_model=Feedback, responses=errors(404, 422))
async def put_feedback(
    thread_id: str,
    run_id: str,
    body: FeedbackBody,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Set the caller's feedback on the run (replacing an earlier one)."""
    tid, rid = _run_ids(thread_id, run_id)
    comment = body.comment.strip() if body.comment and body.comment.strip() else None
    saved = await feedback.put(
        runtime, access, tid, rid, rating=body.rating, comment=comment, message_id=body.message_id
    )
    return JSONResponse(saved)


@router.get("/runs/{run_id}/feedback", response_model=list[Feedback], responses=errors(404, 422))
async def get_feedback(
    thread_id: str,
    run_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """The caller's feedback on the run, as a list (empty or one)."""
    found = await feedback.get(runtime, access, *_run_ids(thread_id, run_id))
    return JSONResponse([found] if found else [])


@router.delete("/runs/{run_id}/feedback", status_code=204, responses=errors(404, 422))
async def delete_feedback(
    thread_id: str,
    run_id: str,
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> Response:
    """Remove the caller's feedback on the run; 404 when there is none."""
    await feedback.remove(runtime, access, *_run_ids(thread_id, run_id))
    return Response(status_code=204)


@router.get("/feedback", response_model=ThreadFeedback, responses=errors(404, 422))
async def thread_feedback(
    thread_id: str, runtime: AppRuntime = Depends(get_runtime), access: Access = Depends(get_access)
) -> JSONResponse:
    """The caller's feedback on every run of the thread (the UI shows it under answers)."""
    items = await feedback.for_thread(runtime, access, check_uuid(thread_id, "thread"))
    return JSONResponse({"feedback": items})
