"""Long-term memory (`/api/memory`): the document, its facts and the update queue."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from pronghorn.memory.records import Category


class MemoryFact(BaseModel):
    id: str
    content: str
    category: Category
    confidence: float
    createdAt: str
    updatedAt: str
    source: str


class MemorySection(BaseModel):
    summary: str
    updatedAt: str


class UserSections(BaseModel):
    workContext: MemorySection
    personalContext: MemorySection
    topOfMind: MemorySection


class HistorySections(BaseModel):
    recentMonths: MemorySection
    earlierContext: MemorySection
    longTermBackground: MemorySection


class UserMemory(BaseModel):
    """The caller's memory in DeerFlow's ``UserMemory`` shape (plus our ``revision`` and
    ``agentName``); also the export file that ``POST /import`` takes back."""

    version: str
    lastUpdated: str
    revision: int
    agentName: str | None
    user: UserSections
    history: HistorySections
    facts: list[MemoryFact]


class MemoryConfigView(BaseModel):
    model: str | None
    injection_enabled: bool
    max_injection_tokens: int
    debounce_s: float
    max_facts: int
    fact_confidence_threshold: float


class MemoryStatus(BaseModel):
    enabled: bool
    mode: Literal["middleware", "tool"]
    queue_depth: int
    queued_for_user: int
    in_flight: int
    processed: int
    dropped: int
    refused: int
    skipped: int
    last_update_at: str | None
    last_error: str | None
    last_error_at: str | None
    config: MemoryConfigView
