"""The thread a run creates: `if_not_exists: "create"` on a thread that does not exist.

Creating it is a thread creation like `POST /threads`, so it is authorized as
`threads.create` (whose handler may refuse it, or stamp the new thread's metadata) on every
path that accepts runs — REST, the SDK, agent calls — before anything is written.
"""

from __future__ import annotations

from pronghorn.auth.authorizer import Authorizer
from pronghorn.persistence.db import Database
from pronghorn.persistence.records.json_object import json_object
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.engine.run_request import RunCreate
from pronghorn.runtime.owned import authorize_with


async def new_thread_metadata(
    db: Database, authorizer: Authorizer, access: Access, thread_id: str, req: RunCreate
) -> dict[str, object] | None:
    """The metadata the run's new thread gets, once `threads.create` allowed it; None when
    the run creates no thread (`if_not_exists: "reject"`, or the thread exists: a thread
    deleted before the run is accepted is then missing, never created unauthorized).
    `Forbidden` when the handler refuses."""
    if req.if_not_exists != "create":
        return None
    if await db.read(lambda conn: threads_repo.get_row(conn, thread_id)) is not None:
        return None
    value: dict[str, object] = {
        "thread_id": thread_id,
        "metadata": {},
        "if_exists": "do_nothing",
        "ttl": None,
    }
    await authorize_with(authorizer, access, "threads", "create", value)
    stamped = json_object(value.get("metadata"))
    return dict(stamped) if stamped is not None else {}
