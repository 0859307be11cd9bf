"""Per-user store namespaces, hidden from the client.

Through the store API every user works in a space of their own: a namespace the client
writes as ``("notes", "work")`` is stored as ``("__user__", <owner>, "notes", "work")``
and comes back exactly as written; nobody sees or touches another user's items, prefixes
or namespaces. An admin who asks for every user's resources (`Access.all_users`) works on
the raw store, namespaces as stored.

Graphs get the raw store (as on the LangGraph server): what a graph writes is stored under
the namespace it names, outside every user's API space; a graph that keeps per-user data
names the user in its namespaces (``config["configurable"]["langgraph_auth_user_id"]``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pronghorn.runtime.access import Access

USER_ROOT = "__user__"


def owner_label(identity: str) -> str:
    """The owner as one namespace label (no dots, as the stores require), reversibly."""
    return identity.replace("%", "%25").replace(".", "%2E")


def prefix_of(access: Access) -> tuple[str, ...]:
    """What every namespace of this access is stored under (nothing for the raw store)."""
    if access.sees_all:
        return ()
    return (USER_ROOT, owner_label(access.identity))


def stored(access: Access, namespace: Sequence[str]) -> tuple[str, ...]:
    """The namespace as stored for a namespace as the client wrote it."""
    return (*prefix_of(access), *namespace)


def shown(access: Access, namespace: Sequence[str]) -> tuple[str, ...] | None:
    """The namespace as the client wrote it, or None if it is not in the access's space."""
    prefix = prefix_of(access)
    if tuple(namespace[: len(prefix)]) != prefix:
        return None
    return tuple(namespace[len(prefix) :])


def depth(access: Access, max_depth: int | None) -> int | None:
    """A client's `max_depth` in stored labels."""
    return None if max_depth is None else max_depth + len(prefix_of(access))
