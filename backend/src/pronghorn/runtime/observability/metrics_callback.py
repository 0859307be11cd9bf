"""Counts each run's chat model calls (with their tokens) and tool calls into the metrics.

A LangChain callback handler added to every run's config (any graph, not only the lead
agent), so every model call made inside a run is counted, whichever middleware made it.
"""

from __future__ import annotations

from typing import cast
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import LLMResult

from pronghorn.runtime.observability.metrics import Metrics


def model_label(serialized: dict[str, object] | None, metadata: dict[str, object] | None) -> str:
    """The model's name as LangChain reports it (`ls_model_name`), else its class."""
    name = (metadata or {}).get("ls_model_name")
    if isinstance(name, str) and name:
        return name[:100]
    ident: object = (serialized or {}).get("name")
    return str(ident)[:100] if ident else "unknown"


def tokens_of(response: LLMResult) -> tuple[int, int]:
    """Input and output tokens of a model call (from the messages' usage_metadata)."""
    inp = out = 0
    for generations in response.generations:
        for gen in generations:
            usage = getattr(getattr(gen, "message", None), "usage_metadata", None)
            if usage:
                inp += int(usage.get("input_tokens") or 0)
                out += int(usage.get("output_tokens") or 0)
    return inp, out


def tool_failed(output: object) -> bool:
    """A tool answer that reports an error (the agent turns exceptions into such a message)."""
    if isinstance(output, ToolMessage):
        return output.status == "error"
    if isinstance(output, dict):
        return cast("dict[str, object]", output).get("status") == "error"
    return False


class MetricsCallback(AsyncCallbackHandler):
    """One per run; never raises into the run."""

    raise_error = False
    run_inline = True

    # Chain and retriever events (every graph node, every runnable inside it) are not
    # counted here: LangChain skips dispatching them to this handler. Tool events are
    # "agent" events in LangChain's terms, so those stay on.
    @property
    def ignore_chain(self) -> bool:
        return True

    @property
    def ignore_retriever(self) -> bool:
        return True

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._models: dict[UUID, str] = {}
        self._tools: dict[UUID, str] = {}

    async def on_custom_event(
        self, name: str, data: object, *, run_id: UUID, **kwargs: object
    ) -> None:
        """The fallback chain (agent/middlewares/llm_errors.py) handed a call on."""
        if name == "pronghorn_model_fallback" and isinstance(data, dict):
            fields = cast("dict[str, object]", data)
            self.metrics.model_fallbacks.labels(
                str(fields.get("from")), str(fields.get("to")), str(fields.get("reason"))
            ).inc()

    async def on_chat_model_start(
        self,
        serialized: dict[str, object],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        self._models[run_id] = model_label(serialized, metadata)

    async def on_llm_start(
        self,
        serialized: dict[str, object],
        prompts: list[str],
        *,
        run_id: UUID,
        metadata: dict[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        self._models[run_id] = model_label(serialized, metadata)

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: object) -> None:
        model = self._models.pop(run_id, "unknown")
        self.metrics.llm_requests.labels(model, "ok").inc()
        inp, out = tokens_of(response)
        if inp:
            self.metrics.llm_tokens.labels(model, "input").inc(inp)
        if out:
            self.metrics.llm_tokens.labels(model, "output").inc(out)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        model = self._models.pop(run_id, "unknown")
        self.metrics.llm_requests.labels(model, "error").inc()

    async def on_tool_start(
        self,
        serialized: dict[str, object],
        input_str: str,
        *,
        run_id: UUID,
        **kwargs: object,
    ) -> None:
        name: object = kwargs.get("name") or (serialized or {}).get("name") or "unknown"
        self._tools[run_id] = str(name)[:100]

    async def on_tool_end(self, output: object, *, run_id: UUID, **kwargs: object) -> None:
        tool = self._tools.pop(run_id, "unknown")
        status = "error" if tool_failed(output) else "ok"
        self.metrics.tool_calls.labels(tool, status).inc()

    async def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        tool = self._tools.pop(run_id, "unknown")
        self.metrics.tool_calls.labels(tool, "error").inc()
