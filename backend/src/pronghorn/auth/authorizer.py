"""The contract for authorizing what a principal does to a resource, shaped after
LangGraph's `@auth.on` handlers so `auth.mode: custom` can run them unchanged.

Built-in ownership (every thread, run, cron, user assistant and store item belongs to a
principal) is enforced by the services themselves; an `Authorizer` adds policy on top:
it may refuse (raise `AuthError(..., 403)`), allow, or allow only resources whose metadata
match a filter, and it may edit `value` in place (e.g. stamp metadata) before a write.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Literal, Protocol

from pronghorn.auth.principal import Principal

Resource = Literal["threads", "assistants", "crons", "store"]
Action = Literal[
    "create",
    "read",
    "update",
    "delete",
    "search",
    "create_run",
    # store
    "put",
    "get",
    "list_namespaces",
]
# A LangGraph-style metadata filter: {"owner": "alice"}, {"owner": {"$eq": "alice"}} or
# {"tags": {"$contains": "x"}}; every key must match.
MetadataFilter = Mapping[str, object]


class Authorizer(Protocol):
    async def authorize(
        self,
        principal: Principal,
        resource: Resource,
        action: Action,
        value: MutableMapping[str, object],
    ) -> MetadataFilter | None:
        """None: allowed. A filter: allowed for resources whose metadata match it.
        Raise `AuthError(detail, 403)` to refuse."""
        ...


class AllowAll:
    """No policy beyond built-in ownership (auth.mode: none and local)."""

    async def authorize(
        self,
        principal: Principal,
        resource: Resource,
        action: Action,
        value: MutableMapping[str, object],
    ) -> MetadataFilter | None:
        return None
