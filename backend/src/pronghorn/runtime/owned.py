"""Access to owned resources: the authorizer's call, and the thread lookup every
thread-bound endpoint (state, history, runs, files, usage...) goes through.

Another user's thread, and one the authorizer's metadata filter leaves out, is *not found*:
a stranger learns nothing, not even that the id exists.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Protocol

from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.authorizer import Action, Authorizer, MetadataFilter, Resource
from pronghorn.persistence.db import Database
from pronghorn.persistence.metadata_filter import matches
from pronghorn.persistence.records.threads import ThreadRecord
from pronghorn.persistence.repos import threads as threads_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.errors import Forbidden, NotFound


class Owners(Protocol):
    """What the lookups need of the runtime: its authorizer and database."""

    @property
    def authorizer(self) -> Authorizer: ...

    @property
    def db(self) -> Database: ...


async def authorize_with(
    authorizer: Authorizer,
    access: Access,
    resource: Resource,
    action: Action,
    value: MutableMapping[str, object] | None = None,
) -> MetadataFilter | None:
    """`authorizer` on one access point: None (allowed), a metadata filter (allowed for
    matching resources), or `Forbidden` (it refused). It may edit `value` in place."""
    try:
        return await authorizer.authorize(
            access.principal, resource, action, value if value is not None else {}
        )
    except AuthError as exc:
        raise Forbidden(exc.detail) from None


async def authorize(
    runtime: Owners,
    access: Access,
    resource: Resource,
    action: Action,
    value: MutableMapping[str, object] | None = None,
) -> MetadataFilter | None:
    """The runtime's authorizer on one access point (see `authorize_with`)."""
    return await authorize_with(runtime.authorizer, access, resource, action, value)


def visible(
    access: Access,
    owner_id: str | None,
    metadata: Mapping[str, object] | None,
    filt: MetadataFilter | None,
) -> bool:
    """Whether a resource with this owner and metadata is there for `access`."""
    return access.may_see(owner_id) and matches(metadata, filt)


async def load_thread(
    runtime: Owners,
    access: Access,
    thread_id: str,
    action: Action = "read",
    value: MutableMapping[str, object] | None = None,
) -> ThreadRecord:
    """The thread if `access` may `action` it; `NotFound` otherwise (unknown, another
    user's, or filtered out by the authorizer); `Forbidden` if the authorizer refused."""
    filt = await authorize(runtime, access, "threads", action, value or {"thread_id": thread_id})
    thread = await runtime.db.read(lambda conn: threads_repo.get_row(conn, thread_id))
    if thread is None or not visible(access, thread.owner_id, thread.metadata, filt):
        raise NotFound.of("Thread", thread_id)
    return thread
