"""Search the caller's threads by title and message text (persistence/repos/thread_search.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pronghorn.persistence.repos import thread_search as repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import InvalidInput
from pronghorn.runtime.services.thread_json import thread_json

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime


async def search_threads(
    runtime: AppRuntime, access: Access, query: str, *, limit: int, offset: int
) -> list[dict[str, object]]:
    """The caller's threads (every user's for an admin asking for all) matching every word
    of `query`, best first. The index is brought up to date first."""
    words = repo.words(query)
    if not words:
        raise InvalidInput("Search for at least one word (letters or digits).")
    await runtime.db.write(lambda conn: repo.refresh(conn, access.owner_scope))
    found = await runtime.db.read(
        lambda conn: repo.search(conn, words, access.owner_scope, limit, offset)
    )
    return [thread_json(thread) for thread in found]
