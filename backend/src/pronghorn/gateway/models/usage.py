"""Token usage of a thread and the caller's budget (`/token-usage`, `/api/usage/budget`)."""

from __future__ import annotations

from pydantic import BaseModel


class RunTokenUsage(BaseModel):
    run_id: str
    status: str
    model_name: str | None
    input_tokens: int
    output_tokens: int
    total_tokens: int
    llm_calls: int
    created_at: str | None


class ModelTokenUsage(BaseModel):
    model: str
    input_tokens: int
    output_tokens: int
    tokens: int
    cost_usd: float
    llm_calls: int
    runs: int


class ThreadTokenUsage(BaseModel):
    """Sums over the thread's runs, each run, and per model (also in DeerFlow's names)."""

    thread_id: str
    input_tokens: int
    output_tokens: int
    total_tokens: int
    llm_calls: int
    runs: list[RunTokenUsage]
    total_input_tokens: int
    total_output_tokens: int
    total_runs: int
    by_model: dict[str, ModelTokenUsage]
    include_active: bool


class BudgetWindow(BaseModel):
    tokens_limit: int | None
    tokens_used: int
    tokens_remaining: int | None
    cost_limit_usd: float | None
    cost_used_usd: float
    cost_remaining_usd: float | None


class RunBudget(BaseModel):
    tokens_limit: int | None
    cost_limit_usd: float | None


class Budget(BaseModel):
    owner_id: str
    limited: bool
    daily: BudgetWindow
    monthly: BudgetWindow
    per_run: RunBudget
