"""The API shape of the run and assistant records (persistence/records/): the one place a
record becomes the JSON the LangGraph Platform API answers with."""

from __future__ import annotations

from typing import Any

from pronghorn.persistence.records.assistants import AssistantRecord
from pronghorn.persistence.records.runs import RunRecord
from pronghorn.persistence.repos.common import iso


def run_api(run: RunRecord) -> dict[str, Any]:  # JSON: the API's Run
    """The Run as the API shows it."""
    return {
        "run_id": run.run_id,
        "thread_id": run.thread_id,
        "assistant_id": run.assistant_id,
        "created_at": iso(run.created_at),
        "updated_at": iso(run.updated_at),
        "status": run.status,
        "metadata": run.metadata,
        "kwargs": run.kwargs,
        "multitask_strategy": run.multitask_strategy,
        "cancel_reason": run.cancel_reason,
        "error": run.error,
        "started_at": iso(run.started_at),
        "ended_at": iso(run.ended_at),
        "usage": {
            "input_tokens": run.usage.input_tokens,
            "output_tokens": run.usage.output_tokens,
            "total_tokens": run.usage.total_tokens,
            "llm_calls": run.usage.llm_calls,
        },
    }


def assistant_version_api(assistant: AssistantRecord) -> dict[str, Any]:  # JSON
    """An assistant version as the API shows it (no `updated_at`)."""
    return {
        "assistant_id": assistant.assistant_id,
        "graph_id": assistant.graph_id,
        "config": assistant.config,
        "context": assistant.context,
        "metadata": assistant.metadata,
        "name": assistant.name,
        "description": assistant.description,
        "version": assistant.version,
        "created_at": iso(assistant.created_at),
    }


def assistant_api(assistant: AssistantRecord) -> dict[str, Any]:  # JSON: the API's Assistant
    """The Assistant as the API shows it."""
    return {**assistant_version_api(assistant), "updated_at": iso(assistant.updated_at)}
