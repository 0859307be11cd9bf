"""Changes to a memory document: the API's fact CRUD and import, as pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import cast

from pronghorn.memory.errors import FactNotFound, InvalidMemory
from pronghorn.memory.records import (
    ALL_SUMMARY_KEYS,
    CATEGORIES,
    Category,
    Fact,
    MemoryDocument,
    Summaries,
    as_confidence,
    new_fact_id,
)


def normalized(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!")


def clean_content(content: str, max_chars: int) -> str:
    text = " ".join(content.split())
    if not text:
        raise InvalidMemory("A fact's content cannot be empty")
    if len(text) > max_chars:
        raise InvalidMemory(f"A fact's content is limited to {max_chars} characters")
    return text


def add_fact(doc: MemoryDocument, fact: Fact, max_facts: int) -> MemoryDocument:
    if any(normalized(f.content) == normalized(fact.content) for f in doc.facts):
        raise InvalidMemory("The same fact is already remembered")
    if len(doc.facts) >= max_facts:
        raise InvalidMemory(f"Memory holds at most {max_facts} facts; delete some first")
    return replace(doc, facts=(*doc.facts, fact))


def edit_fact(
    doc: MemoryDocument,
    fact_id: str,
    *,
    content: str | None = None,
    category: Category | None = None,
    confidence: float | None = None,
) -> tuple[MemoryDocument, Fact]:
    found = doc.fact(fact_id)
    if found is None:
        raise FactNotFound(fact_id)
    edited = found.edited(content=content, category=category, confidence=confidence)
    facts = tuple(edited if f.id == fact_id else f for f in doc.facts)
    return replace(doc, facts=facts), edited


def remove_fact(doc: MemoryDocument, fact_id: str) -> MemoryDocument:
    if doc.fact(fact_id) is None:
        raise FactNotFound(fact_id)
    return replace(doc, facts=tuple(f for f in doc.facts if f.id != fact_id))


def imported(
    doc: MemoryDocument,
    data: Mapping[str, object],
    *,
    max_facts: int,
    max_fact_chars: int,
    max_summary_chars: int,
) -> MemoryDocument:
    """The document an export file describes, replacing ``doc``'s content (the scope is
    the caller's, whatever the file says). Unknown shapes are refused whole."""
    raw = data.get("facts", [])
    if not isinstance(raw, list):
        raise InvalidMemory("'facts' must be a list")
    summaries = data.get("summaries", {})
    if not isinstance(summaries, dict):
        raise InvalidMemory("'summaries' must be an object")
    unknown = set(cast("dict[str, object]", summaries)) - set(ALL_SUMMARY_KEYS)
    if unknown:
        raise InvalidMemory(f"Unknown summaries: {', '.join(sorted(unknown))}")
    parsed = Summaries.from_json(cast("dict[str, object]", summaries))
    for key in ALL_SUMMARY_KEYS:
        if len(parsed.get(key).summary) > max_summary_chars:
            raise InvalidMemory(f"summaries.{key} is longer than {max_summary_chars} characters")
    facts: list[Fact] = []
    seen: set[str] = set()
    for i, item in enumerate(cast("list[object]", raw)):
        if not isinstance(item, dict):
            raise InvalidMemory(f"facts[{i}] must be an object")
        entry = cast("dict[str, object]", item)
        content = entry.get("content")
        if not isinstance(content, str) or not content.strip():
            raise InvalidMemory(f"facts[{i}].content must be a non-empty string")
        if len(content) > max_fact_chars:
            raise InvalidMemory(f"facts[{i}].content is longer than {max_fact_chars} characters")
        category = entry.get("category", "other")
        if not isinstance(category, str) or category not in CATEGORIES:
            raise InvalidMemory(f"facts[{i}].category {category!r} is not a known category")
        fact = Fact.from_json(entry)
        fact_id = fact.id if fact.id not in seen else new_fact_id()
        seen.add(fact_id)
        facts.append(replace(fact, id=fact_id, confidence=as_confidence(entry.get("confidence"))))
    if len(facts) > max_facts:
        raise InvalidMemory(f"The file has {len(facts)} facts; memory holds at most {max_facts}")
    return replace(doc, summaries=parsed, facts=tuple(facts))
