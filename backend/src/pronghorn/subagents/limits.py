"""Response guard of the lead agent: at most ``max_per_response`` ``task`` calls in one
model response and ``max_per_run`` in one run (counted since the last user message).

Excess calls are removed from the AI message before the tool node runs them, and the
message says so in a visible note (the user sees it, and the model reads it next turn),
so nothing is started and then thrown away.
"""

from __future__ import annotations

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, AnyMessage, ToolCall
from langgraph.runtime import Runtime

from pronghorn.agent.state import ThreadState
from pronghorn.agent.untyped import as_dict, as_list
from pronghorn.models.notes import is_user_turn

TASK_TOOL = "task"


def earlier_task_calls(messages: list[AnyMessage]) -> int:
    """``task`` calls of the AI messages of this user turn, the latest one excluded."""
    n = 0
    for m in reversed(messages[:-1]):
        if is_user_turn(m):
            break
        if isinstance(m, AIMessage):
            n += sum(1 for c in m.tool_calls if c["name"] == TASK_TOOL)
    return n


def with_note(message: AIMessage, note: str, kept: list[ToolCall]) -> AIMessage:
    # The note goes after the text, or as one more block of a list of blocks.
    content: str | list[str | dict[str, object]] = message.content
    if isinstance(content, str):
        content = f"{content}\n\n{note}".strip()
    else:
        content = [*content, {"type": "text", "text": note}]
    kept_ids = {c.get("id") for c in kept}
    extra = dict(message.additional_kwargs)
    raw = as_list(extra.get("tool_calls"))
    if raw is not None:  # the provider's raw copy must agree with tool_calls
        extra["tool_calls"] = [
            c for c in raw if (call := as_dict(c)) is not None and call.get("id") in kept_ids
        ]
    return message.model_copy(
        update={"content": content, "tool_calls": kept, "additional_kwargs": extra}
    )


class SubagentLimitMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, *, max_per_response: int, max_per_run: int) -> None:
        super().__init__()
        self.max_per_response = max_per_response
        self.max_per_run = max_per_run

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        latest = messages[-1]
        tasks = [c for c in latest.tool_calls if c["name"] == TASK_TOOL]
        if not tasks:
            return None
        room = max(0, self.max_per_run - earlier_task_calls(messages))
        allowed = min(self.max_per_response, room)
        if len(tasks) <= allowed:
            return None
        dropped = tasks[allowed:]
        dropped_ids = {c.get("id") for c in dropped}
        kept = [c for c in latest.tool_calls if c.get("id") not in dropped_ids]
        names = ", ".join(repr(str(c["args"].get("description") or "task")) for c in dropped)
        why = (
            f"at most {self.max_per_response} per response"
            if allowed == self.max_per_response
            else f"at most {self.max_per_run} per run"
        )
        note = (
            f"[Sub-agent limit: {len(dropped)} task call(s) not run ({why}): {names}. "
            "Wait for the running ones, then delegate the rest or do it yourself.]"
        )
        updated = with_note(latest, note, kept)
        updated.additional_kwargs["subagent_calls_dropped"] = len(dropped)
        return {"messages": [updated]}
