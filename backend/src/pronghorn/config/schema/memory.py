"""`memory`: long-term memory per user (facts + summaries), how it is updated and used."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class MemoryConfig(BaseModel):
    """Long-term memory per user (docs/memory.md). Hot-reloadable: a run uses the snapshot
    current at its start; the update queue reads the live values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(default=True, description="Keep and use long-term memory per user.")
    mode: Literal["middleware", "tool"] = Field(
        default="middleware",
        description=(
            "middleware: after each run the conversation is queued and one model call "
            "updates the memory; tool: the agent gets memory_search/add/update/delete tools "
            "instead. In both modes the memory is injected into the system prompt."
        ),
    )
    model: str | None = Field(
        default=None,
        description="Model that updates the memory (a models[].name); None: the run's model.",
    )
    injection_enabled: bool = Field(
        default=True, description="Inject the summaries and facts into the lead agent's prompt."
    )
    max_injection_tokens: int = Field(
        default=2000,
        ge=50,
        le=100_000,
        description="Budget of the injected memory (~4 characters a token).",
    )
    debounce_s: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="Wait after a thread's last run before updating memory (runs coalesce).",
    )
    queue_max_depth: int = Field(
        default=1000,
        ge=1,
        description="Conversations waiting for an update; beyond it the oldest is dropped.",
    )
    max_concurrent_updates: int = Field(
        default=2, ge=1, le=32, description="Memory updates (model calls) running at once."
    )
    max_facts: int = Field(
        default=100, ge=1, le=10_000, description="Facts kept per user (and agent)."
    )
    fact_confidence_threshold: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="Facts the model extracts below this confidence are not stored.",
    )
    max_fact_chars: int = Field(default=1000, ge=20, description="Longest fact content.")
    max_summary_chars: int = Field(default=1500, ge=20, description="Longest summary.")
    max_input_chars: int = Field(
        default=12_000,
        ge=500,
        description="Conversation text sent to the update model (the newest part).",
    )
    model_timeout_s: float = Field(
        default=120.0, gt=0, description="Timeout of one update model call."
    )
    shutdown_flush_timeout_s: float = Field(
        default=30.0, ge=0, description="How long shutdown waits for the queue to drain."
    )
