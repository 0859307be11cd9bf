"""One memory update: the prompt for the update model and how its answer is applied.

The model sees the current memory (facts with their ids, summaries) and the new part of a
conversation, and answers with a JSON object (parsed tolerantly, see parse.py):
``summaries`` (new text per summary; absent or null keeps it), ``new_facts``,
``updated_facts`` (by id: a contradicted fact corrected) and ``retired_facts`` (ids no
longer true). An answer that would retire most of the facts is refused whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, cast

from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.memory.edits import normalized
from pronghorn.memory.records import (
    CATEGORIES,
    SUMMARY_KEYS,
    Fact,
    MemoryDocument,
    as_category,
    as_confidence,
    new_fact_id,
    now_iso,
)

Role = Literal["user", "assistant"]
REFUSE_MIN_FACTS = 4  # below this, retiring most facts is not suspicious


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation worth remembering (user input or final answer)."""

    role: Role
    text: str
    id: str | None = None


class UpdateRefused(Exception):
    """The model's answer was not applied (unparseable, or it would delete most facts)."""


@dataclass(frozen=True, slots=True)
class UpdateOutcome:
    document: MemoryDocument
    added: int = 0
    updated: int = 0
    retired: int = 0


PROMPT = """You maintain the long-term memory an AI assistant keeps about one user.
Read the current memory and the new conversation, then answer with ONE JSON object only:
{{
  "summaries": {{"work_context": str|null, "personal_context": str|null,
                "current_focus": str|null}},
  "new_facts": [{{"content": str, "category": str, "confidence": number}}],
  "updated_facts": [{{"id": str, "content": str, "category": str, "confidence": number}}],
  "retired_facts": [str]
}}
Rules:
- Summaries are 1-3 sentences each; null keeps the current one unchanged.
- Facts are durable things about the user worth knowing in a later conversation (not the
  task's details). Categories: {categories}.
- When the user contradicts or corrects a remembered fact, put the corrected fact in
  "updated_facts" with that fact's id (category "correction" if the user corrected the
  assistant), or its id in "retired_facts" if it is simply no longer true.
- Do not repeat facts already remembered. Confidence is 0..1.
- Empty lists when nothing changes.

Current memory:
{memory}

New conversation:
{conversation}
"""


def transcript(turns: Sequence[Turn], max_chars: int) -> str:
    lines = [f"{t.role}: {' '.join(t.text.split())}" for t in turns if t.text.strip()]
    text = "\n".join(lines)
    return text[-max_chars:]


def memory_for_prompt(doc: MemoryDocument) -> str:
    data = {
        "summaries": {k: doc.summaries.get(k).summary for k in SUMMARY_KEYS},
        "facts": [{"id": f.id, "content": f.content, "category": f.category} for f in doc.facts],
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


def update_prompt(doc: MemoryDocument, turns: Sequence[Turn], cfg: MemoryConfig) -> str:
    return PROMPT.format(
        categories=", ".join(CATEGORIES),
        memory=memory_for_prompt(doc),
        conversation=transcript(turns, cfg.max_input_chars),
    )


def _dicts(value: object) -> list[dict[str, object]]:
    if not isinstance(value, list):
        return []
    return [
        cast("dict[str, object]", v) for v in cast("list[object]", value) if isinstance(v, dict)
    ]


def _ids(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    out: list[str] = []
    for v in cast("list[object]", value):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict) and isinstance(cast("dict[str, object]", v).get("id"), str):
            out.append(str(cast("dict[str, object]", v)["id"]))
    return out


def _text(value: object, max_chars: int) -> str:
    return " ".join(str(value).split())[:max_chars] if isinstance(value, str) else ""


def _evict(facts: list[Fact], max_facts: int) -> list[Fact]:
    """Past the limit, drop the least valuable: lowest confidence, then oldest (corrections
    last)."""
    if len(facts) <= max_facts:
        return facts
    ranked = sorted(
        facts,
        key=lambda f: (f.category == "correction", f.confidence, f.updated_at),
        reverse=True,
    )
    keep = {f.id for f in ranked[:max_facts]}
    return [f for f in facts if f.id in keep]


def apply_update(
    doc: MemoryDocument,
    answer: dict[str, object],
    cfg: MemoryConfig,
    *,
    thread_id: str | None,
) -> UpdateOutcome:
    by_id = {f.id: f for f in doc.facts}
    retired = {i for i in _ids(answer.get("retired_facts")) if i in by_id}
    if len(doc.facts) >= REFUSE_MIN_FACTS and len(retired) * 2 > len(doc.facts):
        raise UpdateRefused(
            f"the update would retire {len(retired)} of {len(doc.facts)} facts; refused"
        )
    updated = 0
    for item in _dicts(answer.get("updated_facts")):
        fact_id = item.get("id")
        if not isinstance(fact_id, str) or fact_id not in by_id or fact_id in retired:
            continue
        content = _text(item.get("content"), cfg.max_fact_chars)
        old = by_id[fact_id]
        by_id[fact_id] = old.edited(
            content=content or None,
            category=as_category(item["category"]) if "category" in item else None,
            confidence=as_confidence(item["confidence"], old.confidence)
            if "confidence" in item
            else None,
            source_thread_id=thread_id,
        )
        updated += 1
    facts = [by_id[f.id] for f in doc.facts if f.id not in retired]
    known = {normalized(f.content) for f in facts}
    added = 0
    for item in _dicts(answer.get("new_facts")):
        content = _text(item.get("content"), cfg.max_fact_chars)
        confidence = as_confidence(item.get("confidence"))
        if not content or normalized(content) in known:
            continue
        if confidence < cfg.fact_confidence_threshold:
            continue
        known.add(normalized(content))
        facts.append(
            Fact(
                id=new_fact_id(),
                content=content,
                category=as_category(item.get("category")),
                confidence=confidence,
                source_thread_id=thread_id,
            )
        )
        added += 1
    summaries = doc.summaries
    raw = answer.get("summaries")
    if isinstance(raw, dict):
        given = cast("dict[str, object]", raw)
        for key in SUMMARY_KEYS:
            text = _text(given.get(key), cfg.max_summary_chars)
            if text and text != summaries.get(key).summary:
                summaries = summaries.with_text(key, text)
    facts = _evict(facts, cfg.max_facts)
    new_doc = replace(doc, facts=tuple(facts), summaries=summaries, updated_at=now_iso())
    return UpdateOutcome(new_doc, added=added, updated=updated, retired=len(retired))
