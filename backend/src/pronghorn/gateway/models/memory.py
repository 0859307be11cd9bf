"""Long-term memory (`/api/memory`): the document, its facts and the update queue."""

from __future__ import annotations

from pydantic import BaseModel


class MemoryFact(BaseModel):
    id: str
    content: str
    category: str
    confidence: float
    source_thread_id: str | None
    created_at: str
    updated_at: str


class MemorySummary(BaseModel):
    summary: str
    updated_at: str | None


class MemorySummaries(BaseModel):
    work_context: MemorySummary
    personal_context: MemorySummary
    current_focus: MemorySummary


class MemoryDocument(BaseModel):
    """The caller's memory; also the export file that `POST /import` takes back."""

    version: int
    revision: int
    agent_name: str | None
    updated_at: str | None
    summaries: MemorySummaries
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
    mode: str
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
