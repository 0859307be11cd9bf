"""Token usage of a thread as a service: sums over its runs, each run, and per model (the
lead agent's model calls, priced); runs in flight count only when asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from pronghorn.persistence.repos import model_usage
from pronghorn.persistence.repos import runs as runs_repo
from pronghorn.runtime.access import Access
from pronghorn.runtime.owned import load_thread

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

ACTIVE = ("pending", "running")


@dataclass(frozen=True, slots=True)
class ThreadUsage:
    """A thread's token usage; `runs` and `by_model` as the repositories give them (one
    mapping per run, per model)."""

    input_tokens: int
    output_tokens: int
    total_tokens: int
    llm_calls: int
    runs: Sequence[Mapping[str, object]]
    by_model: Sequence[Mapping[str, object]]
    counted_runs: int
    """How many runs the sums cover (the settled ones, or all with in-flight runs)."""


async def thread_usage(
    runtime: AppRuntime, access: Access, thread_id: str, *, include_active: bool
) -> ThreadUsage:
    """The usage of a thread `access` may read (`NotFound` otherwise)."""
    await load_thread(runtime, access, thread_id)

    def unit(conn: Connection):
        total = runs_repo.token_usage_for_thread(conn, thread_id)
        per_run = runs_repo.token_usage_by_run(conn, thread_id)
        statuses = None if include_active else _settled(per_run)
        by_model = model_usage.by_model_for_thread(conn, thread_id, statuses=statuses)
        active = model_usage.active_for_thread(conn, thread_id, ACTIVE) if include_active else None
        return total, per_run, by_model, active

    total, per_run, by_model, active = await runtime.db.read(unit)
    inputs, outputs = int(total["input_tokens"]), int(total["output_tokens"])
    tokens, calls = int(total["total_tokens"]), int(total["llm_calls"])
    if active is not None:
        inputs += active["input_tokens"]
        outputs += active["output_tokens"]
        tokens += active["input_tokens"] + active["output_tokens"]
        calls += active["llm_calls"]
    counted = [r for r in per_run if include_active or r["status"] not in ACTIVE]
    return ThreadUsage(inputs, outputs, tokens, calls, per_run, by_model, len(counted))


def _settled(per_run: Sequence[Mapping[str, object]]) -> list[str]:
    return sorted({str(r["status"]) for r in per_run if r["status"] not in ACTIVE})
