"""What a user's memory holds: facts and three short summaries (typed records)."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field, replace
from typing import Literal, cast, get_args

Category = Literal[
    "preference",
    "correction",
    "context",
    "goal",
    "behavior",
    "identity",
    "constraint",
    "decision",
    "knowledge",
    "other",
]
CATEGORIES: tuple[Category, ...] = get_args(Category)
SummaryKey = Literal["work_context", "personal_context", "current_focus"]
SUMMARY_KEYS: tuple[SummaryKey, ...] = get_args(SummaryKey)
# Summaries of the user's history: kept and shown (and imported from DeerFlow, whose memory
# has them); the updater writes only the three above.
HistoryKey = Literal["recent_months", "earlier_context", "long_term_background"]
HISTORY_KEYS: tuple[HistoryKey, ...] = get_args(HistoryKey)
AnySummaryKey = SummaryKey | HistoryKey
ALL_SUMMARY_KEYS: tuple[AnySummaryKey, ...] = (*SUMMARY_KEYS, *HISTORY_KEYS)
DOCUMENT_VERSION = 1


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_fact_id() -> str:
    return f"fact_{uuid.uuid4().hex[:16]}"


def as_category(value: object) -> Category:
    """A known category, else ``other`` (models invent categories)."""
    text = str(value or "").strip().lower()
    for c in CATEGORIES:
        if c == text:
            return c
    return "other"


def as_confidence(value: object, default: float = 0.8) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    if number != number:  # NaN
        return default
    return min(1.0, max(0.0, number))


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    content: str
    category: Category = "other"
    confidence: float = 0.8
    source_thread_id: str | None = None
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)

    def edited(
        self,
        *,
        content: str | None = None,
        category: Category | None = None,
        confidence: float | None = None,
        source_thread_id: str | None = None,
    ) -> Fact:
        return replace(
            self,
            content=self.content if content is None else content,
            category=self.category if category is None else category,
            confidence=self.confidence if confidence is None else confidence,
            source_thread_id=source_thread_id or self.source_thread_id,
            updated_at=now_iso(),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "content": self.content,
            "category": self.category,
            "confidence": self.confidence,
            "source_thread_id": self.source_thread_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Fact:
        source = data.get("source_thread_id")
        return cls(
            id=str(data.get("id") or new_fact_id()),
            content=str(data.get("content") or ""),
            category=as_category(data.get("category")),
            confidence=as_confidence(data.get("confidence")),
            source_thread_id=str(source) if source else None,
            created_at=str(data.get("created_at") or now_iso()),
            updated_at=str(data.get("updated_at") or now_iso()),
        )


@dataclass(frozen=True, slots=True)
class Summary:
    summary: str = ""
    updated_at: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"summary": self.summary, "updated_at": self.updated_at}


@dataclass(frozen=True, slots=True)
class Summaries:
    work_context: Summary = field(default_factory=Summary)
    personal_context: Summary = field(default_factory=Summary)
    current_focus: Summary = field(default_factory=Summary)
    recent_months: Summary = field(default_factory=Summary)
    earlier_context: Summary = field(default_factory=Summary)
    long_term_background: Summary = field(default_factory=Summary)

    def get(self, key: AnySummaryKey) -> Summary:
        summary: Summary = getattr(self, key)
        return summary

    def with_text(self, key: AnySummaryKey, text: str) -> Summaries:
        return replace(self, **{key: Summary(summary=text, updated_at=now_iso())})

    def to_json(self) -> dict[str, object]:
        return {k: self.get(k).to_json() for k in ALL_SUMMARY_KEYS}

    @classmethod
    def from_json(cls, data: object) -> Summaries:
        out = cls()
        if not isinstance(data, dict):
            return out
        body = cast("dict[str, object]", data)
        for key in ALL_SUMMARY_KEYS:
            item = body.get(key)
            if isinstance(item, dict):
                entry = cast("dict[str, object]", item)
                text = entry.get("summary")
                at = entry.get("updated_at")
                out = replace(
                    out,
                    **{key: Summary(str(text or ""), str(at) if at else None)},
                )
            elif isinstance(item, str):
                out = replace(out, **{key: Summary(item, None)})
        return out


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Whose memory: a user (their principal identity) and optionally one custom agent."""

    user_id: str
    agent_name: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryDocument:
    scope: MemoryScope
    summaries: Summaries = field(default_factory=Summaries)
    facts: tuple[Fact, ...] = ()
    revision: int = 0
    updated_at: str | None = None

    def fact(self, fact_id: str) -> Fact | None:
        return next((f for f in self.facts if f.id == fact_id), None)

    def to_json(self) -> dict[str, object]:
        return {
            "version": DOCUMENT_VERSION,
            "revision": self.revision,
            "agent_name": self.scope.agent_name,
            "updated_at": self.updated_at,
            "summaries": self.summaries.to_json(),
            "facts": [f.to_json() for f in self.facts],
        }
