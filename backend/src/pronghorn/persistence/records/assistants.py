"""An assistant as the assistants repository returns it (persistence/repos/assistants.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pronghorn.persistence.records.json_object import JsonObject, json_object
from pronghorn.persistence.records.runs import Row


@dataclass(frozen=True, slots=True)
class AssistantRecord:
    """One `assistants` row, or one of its `assistant_versions` (those have no owner and
    no `updated_at`: None). `owner_id` None: a system assistant, shared read-only.
    Timestamps are as the database gives them (naive on SQLite)."""

    assistant_id: str
    graph_id: str
    config: JsonObject
    context: JsonObject
    metadata: JsonObject
    name: str
    description: str | None
    version: int
    created_at: datetime
    updated_at: datetime | None
    owner_id: str | None


def assistant_record(row: Row) -> AssistantRecord:
    """The record of an `assistants` or `assistant_versions` row (or of the values one is
    inserted with)."""
    description = row["description"]
    created = row["created_at"]
    updated = row.get("updated_at")
    owner = row.get("owner_id")
    if not isinstance(created, datetime):
        raise TypeError(f"a timestamp was expected, not {created!r}")
    return AssistantRecord(
        assistant_id=str(row["assistant_id"]),
        graph_id=str(row["graph_id"]),
        config=json_object(row["config"]) or {},
        context=json_object(row["context"]) or {},
        metadata=json_object(row["metadata"]) or {},
        name=str(row["name"]),
        description=None if description is None else str(description),
        version=int(str(row["version"])),
        created_at=created,
        updated_at=updated if isinstance(updated, datetime) else None,
        owner_id=None if owner is None else str(owner),
    )
