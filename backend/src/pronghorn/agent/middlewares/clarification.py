"""Tool gate: a clarifying question is asked alone, shown as a message, answered by resume.

When the model calls ``ask_clarification``:

1. ``after_model`` keeps only that call (other tools called in the same turn would run
   before the user answered) and adds its ToolMessage at once: the question, with an
   ``artifact`` ``{"human_input": {"kind": "human_input_request", ...}}`` as DeerFlow's UI
   reads it (``human_input.question_message``). So the question is in the thread's
   messages for every client, while the run waits.
2. The next ``before_model`` finds that ToolMessage unanswered and interrupts the run with
   ``{"type": "clarification", "question", "options", "context"}``, the interrupt LangGraph
   SDK clients, Pronghorn's UI and the IM channels answer with ``Command(resume=...)``.
3. On resume the ToolMessage (same id) is replaced by the answer, and the model goes on.

A new run with a user message instead of a resume (DeerFlow's UI answers in the chat box
that way) leaves the question message as the call's result; the user's message is the
answer the model reads next. A call with an empty question is left to the tool, which
answers it with an error.
"""

from __future__ import annotations

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from pronghorn.agent.human_input import TOOL, answered_message, pending_request, question_message
from pronghorn.agent.state import ThreadState
from pronghorn.agent.untyped import as_list, as_mapping


class ClarificationMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        message = messages[-1]
        calls = message.tool_calls
        asks = [c for c in calls if c.get("name") == TOOL]
        if not asks:
            return None
        kept = asks[0]
        out: list[BaseMessage] = []
        if len(calls) > 1:
            extra = dict(message.additional_kwargs)
            raw = as_list(extra.get("tool_calls"))
            if raw is not None:
                extra["tool_calls"] = [
                    r for r in raw if (as_mapping(r) or {}).get("id") == kept.get("id")
                ]
            out.append(
                message.model_copy(update={"tool_calls": [kept], "additional_kwargs": extra})
            )
        question = question_message(kept)
        if question is not None:
            out.append(question)
        return {"messages": out} if out else None

    def before_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        if not isinstance(last, ToolMessage):
            return None
        request = pending_request(last)
        if request is None:
            return None
        answer = interrupt(
            {
                "type": "clarification",
                "question": request["question"],
                "options": [o["value"] for o in request.get("options", [])] or None,
                "context": request.get("context"),
            }
        )
        return {"messages": [answered_message(last, request, answer)]}
