"""``GET /api/threads/search``: the caller's threads by title and message text."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from pronghorn.gateway.deps import get_access, get_runtime
from pronghorn.gateway.models.errors import errors
from pronghorn.gateway.models.langgraph import Thread
from pronghorn.gateway.responses import JSONResponse
from pronghorn.runtime.access import Access
from pronghorn.runtime.services.thread_search import search_threads
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter(prefix="/api/threads", tags=["threads"])


class ThreadSearchResult(BaseModel):
    threads: list[Thread]
    next_offset: int | None


@router.get("/search", response_model=ThreadSearchResult, responses=errors(422))
async def search(
    q: str = Query(min_length=1, max_length=500, description="Words to find (all of them)."),
    limit: int = Query(default=20, ge=1, le=100),
    offset: int = Query(default=0, ge=0, le=100_000),
    runtime: AppRuntime = Depends(get_runtime),
    access: Access = Depends(get_access),
) -> JSONResponse:
    """Threads of the caller whose title or message text holds every word of ``q`` (each
    as a word prefix, case and accents ignored), best match first (title matches weigh
    more), then the most recently updated. ``next_offset`` is the offset of the next page,
    null on the last. SQLite FTS5 or PostgreSQL full text (docs/api.md)."""
    found = await search_threads(runtime, access, q, limit=limit + 1, offset=offset)
    more = len(found) > limit
    return JSONResponse({"threads": found[:limit], "next_offset": offset + limit if more else None})
