"""Ids every layer agrees on, as pure functions (no imports from the rest of the package)."""

from __future__ import annotations

import uuid

# The namespace the reference server uses for system assistant ids (uuid5(NS, graph_id)).
SYSTEM_ASSISTANT_NAMESPACE = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")


def system_assistant_id(graph_id: str) -> str:
    """The id of the assistant created for `graph_id` at startup (as the reference does)."""
    return str(uuid.uuid5(SYSTEM_ASSISTANT_NAMESPACE, graph_id))
