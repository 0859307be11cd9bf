"""Tool gate: a clarifying question is asked alone.

``ask_clarification`` interrupts the run (LangGraph ``interrupt`` with
``{"type": "clarification", "question", "options", "context"}``) and the answer given with
``Command(resume=...)`` becomes its ToolMessage. When the model asks a question *and*
calls other tools in the same turn, those other calls would run before the user answered;
this gate keeps only the first ``ask_clarification`` call. The rest of the chain lets the
interrupt through untouched (the tool-error middleware re-raises LangGraph control flow),
so the resumed tool node completes normally.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from pronghorn.agent.state import ThreadState

TOOL = "ask_clarification"


class ClarificationMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, Any] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        message = messages[-1]
        calls = message.tool_calls
        asks = [c for c in calls if c.get("name") == TOOL]
        if not asks or len(calls) == 1:
            return None
        kept = asks[0]
        extra = dict(message.additional_kwargs)
        raw = extra.get("tool_calls")
        if isinstance(raw, list):
            extra["tool_calls"] = [r for r in raw if r.get("id") == kept.get("id")]
        return {
            "messages": [
                message.model_copy(update={"tool_calls": [kept], "additional_kwargs": extra})
            ]
        }
