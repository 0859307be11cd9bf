"""Spans for a run's graph, its nodes, its model calls and its tool calls.

A LangChain callback handler, one per run, whose spans hang under the run's span. LangChain
reports every runnable; only the graph itself (the root), its nodes (a runnable named as
the `langgraph_node` it runs in), chat models and tools become spans, and a runnable that
is none of those passes its place on to its children, so the tree reads run → graph →
node → model / tool (→ a sub-graph's nodes …).
"""

from __future__ import annotations

from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from pronghorn.runtime.observability.metrics_callback import model_label, tokens_of, tool_failed


class TraceCallback(AsyncCallbackHandler):
    raise_error = False
    run_inline = True

    def __init__(self, tracer: Tracer, parent: Span, attributes: dict[str, str]) -> None:
        self.tracer = tracer
        self.root = parent
        self.attributes = attributes
        self._spans: dict[UUID, Span] = {}
        self._parents: dict[UUID, UUID | None] = {}  # runnables that are no span of their own

    def _parent_span(self, parent_run_id: UUID | None) -> Span:
        seen = 0
        while parent_run_id is not None and seen < 1000:
            span = self._spans.get(parent_run_id)
            if span is not None:
                return span
            parent_run_id = self._parents.get(parent_run_id)
            seen += 1
        return self.root

    def _start(
        self,
        name: str,
        run_id: UUID,
        parent_run_id: UUID | None,
        attributes: dict[str, str | int],
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> Span:
        context = trace.set_span_in_context(self._parent_span(parent_run_id))
        span = self.tracer.start_span(
            name, context=context, kind=kind, attributes={**self.attributes, **attributes}
        )
        self._spans[run_id] = span
        return span

    def _end(self, run_id: UUID, error: BaseException | str | None = None) -> Span | None:
        self._parents.pop(run_id, None)
        span = self._spans.pop(run_id, None)
        if span is None:
            return None
        if error is not None:
            if isinstance(error, BaseException):
                span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        span.end()
        return span

    # -- chains: the graph and its nodes --------------------------------------------------
    async def on_chain_start(
        self,
        serialized: dict[str, object] | None,
        inputs: object,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        name = str(kwargs.get("name") or (serialized or {}).get("name") or "chain")
        node = (metadata or {}).get("langgraph_node")
        if parent_run_id is None:
            self._start(f"graph {name}", run_id, None, {"langgraph.graph": name})
        elif node is not None and name == node:
            step: object = (metadata or {}).get("langgraph_step")
            extra: dict[str, str | int] = {"langgraph.node": name}
            if isinstance(step, int):
                extra["langgraph.step"] = step
            self._start(f"node {name}", run_id, parent_run_id, extra)
        else:
            self._parents[run_id] = parent_run_id

    async def on_chain_end(self, outputs: object, *, run_id: UUID, **kwargs: object) -> None:
        self._end(run_id)

    async def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        # A node that interrupts (human in the loop) raises GraphInterrupt: not a failure.
        if type(error).__name__ in ("GraphInterrupt", "ParentCommand"):
            self._end(run_id)
        else:
            self._end(run_id, error)

    # -- model calls --------------------------------------------------------------------
    async def on_chat_model_start(
        self,
        serialized: dict[str, object],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        model = model_label(serialized, metadata)
        provider = str((metadata or {}).get("ls_provider") or "")
        self._start(
            f"chat {model}",
            run_id,
            parent_run_id,
            {"gen_ai.request.model": model, "gen_ai.system": provider},
            SpanKind.CLIENT,
        )

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: object) -> None:
        span = self._spans.get(run_id)
        if span is not None:
            inp, out = tokens_of(response)
            span.set_attribute("gen_ai.usage.input_tokens", inp)
            span.set_attribute("gen_ai.usage.output_tokens", out)
        self._end(run_id)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        self._end(run_id, error)

    # -- tool calls ---------------------------------------------------------------------
    async def on_tool_start(
        self,
        serialized: dict[str, object],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: object,
    ) -> None:
        name = str(kwargs.get("name") or (serialized or {}).get("name") or "tool")
        self._start(f"tool {name}", run_id, parent_run_id, {"gen_ai.tool.name": name})

    async def on_tool_end(self, output: object, *, run_id: UUID, **kwargs: object) -> None:
        self._end(run_id, "the tool reported an error" if tool_failed(output) else None)

    async def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        self._end(run_id, error)

    def close(self) -> None:
        """End spans a cancelled run left open (LangChain reports no end for them)."""
        for run_id in list(self._spans):
            self._end(run_id, "cancelled")
