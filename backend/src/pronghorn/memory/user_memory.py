"""The memory as clients see it: DeerFlow's ``UserMemory`` document, the one shape of every
memory answer (`/api/memory`, the embedded client, Pronghorn's UI).

    {version: "1.0", lastUpdated, revision, agentName,
     user: {workContext, personalContext, topOfMind},
     history: {recentMonths, earlierContext, longTermBackground},   each {summary, updatedAt}
     facts: [{id, content, category, confidence, createdAt, updatedAt, source}]}

Times are ISO strings, ``""`` when never set; a fact's ``source`` is the thread it was
learnt in, or ``"manual"``. ``revision`` and ``agentName`` are ours (DeerFlow ignores them).
``import_form`` turns such a document (or one of our older export files) back into what
``MemoryService.import_document`` takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pronghorn.memory.errors import InvalidMemory
from pronghorn.memory.records import AnySummaryKey, Fact, MemoryDocument, Summary

VERSION = "1.0"
MANUAL = "manual"
USER_SECTIONS: dict[str, AnySummaryKey] = {
    "workContext": "work_context",
    "personalContext": "personal_context",
    "topOfMind": "current_focus",
}
HISTORY_SECTIONS: dict[str, AnySummaryKey] = {
    "recentMonths": "recent_months",
    "earlierContext": "earlier_context",
    "longTermBackground": "long_term_background",
}


def _section(summary: Summary) -> dict[str, str]:
    return {"summary": summary.summary, "updatedAt": summary.updated_at or ""}


def fact_view(fact: Fact) -> dict[str, object]:
    return {
        "id": fact.id,
        "content": fact.content,
        "category": fact.category,
        "confidence": fact.confidence,
        "createdAt": fact.created_at,
        "updatedAt": fact.updated_at,
        "source": fact.source_thread_id or MANUAL,
    }


def user_memory(doc: MemoryDocument) -> dict[str, object]:
    s = doc.summaries
    return {
        "version": VERSION,
        "lastUpdated": doc.updated_at or "",
        "revision": doc.revision,
        "agentName": doc.scope.agent_name,
        "user": {name: _section(s.get(key)) for name, key in USER_SECTIONS.items()},
        "history": {name: _section(s.get(key)) for name, key in HISTORY_SECTIONS.items()},
        "facts": [fact_view(f) for f in doc.facts],
    }


def _sections(
    data: Mapping[str, object], group: str, names: dict[str, AnySummaryKey]
) -> dict[str, object]:
    raw = data.get(group, {})
    if not isinstance(raw, dict):
        raise InvalidMemory(f"'{group}' must be an object")
    block = cast("dict[str, object]", raw)
    unknown = set(block) - set(names)
    if unknown:
        raise InvalidMemory(f"Unknown {group} sections: {', '.join(sorted(unknown))}")
    out: dict[str, object] = {}
    for name, key in names.items():
        item = block.get(name)
        if item is None:
            continue
        if not isinstance(item, dict):
            raise InvalidMemory(f"{group}.{name} must be an object")
        section = cast("dict[str, object]", item)
        text = section.get("summary", "")
        if not isinstance(text, str):
            raise InvalidMemory(f"{group}.{name}.summary must be a string")
        out[key] = {"summary": text, "updated_at": section.get("updatedAt") or None}
    return out


def import_form(data: Mapping[str, object]) -> dict[str, object]:
    """What ``import_document`` takes, from a ``UserMemory`` document (DeerFlow's export or
    ours). A file in our older shape (``summaries``, snake-case facts) passes unchanged."""
    if "summaries" in data:
        return dict(data)
    version = data.get("version", VERSION)
    if str(version) not in (VERSION, "1"):
        raise InvalidMemory(f"Unsupported memory version {version!r}")
    raw = data.get("facts", [])
    if not isinstance(raw, list):
        raise InvalidMemory("'facts' must be a list")
    facts: list[object] = []
    for item in cast("list[object]", raw):
        if not isinstance(item, dict):
            facts.append(item)  # refused, with its index, by the import
            continue
        fact = cast("dict[str, object]", item)
        source = fact.get("source")
        facts.append(
            {
                "id": fact.get("id"),
                "content": fact.get("content"),
                "category": fact.get("category", "other"),
                "confidence": fact.get("confidence"),
                "source_thread_id": source
                if isinstance(source, str) and source not in (MANUAL, "unknown", "")
                else None,
                "created_at": fact.get("createdAt"),
                "updated_at": fact.get("updatedAt") or fact.get("createdAt"),
            }
        )
    return {
        "version": 1,
        "summaries": {
            **_sections(data, "user", USER_SECTIONS),
            **_sections(data, "history", HISTORY_SECTIONS),
        },
        "facts": facts,
    }
