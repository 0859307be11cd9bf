"""Response guard: stop the agent from repeating the same tool calls.

The signature of a model turn is its set of tool calls (name + canonical arguments).
Counted over the AI messages since the last user message (a window of ``window``):

* at ``warn_repeats`` identical turns, the next model request carries a warning in its
  system message (request-only; nothing is added to the chat);
* at ``stop_repeats``, the tool calls of the latest AI message are removed and a short
  explanation is appended, so the run ends with that final AI message.

Everything is derived from the messages, so it survives restarts and needs no cleanup.
"""

from __future__ import annotations

import json

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._projecting import RequestProjection
from pronghorn.agent.middlewares._util import with_system_note
from pronghorn.agent.state import ThreadState
from pronghorn.models.notes import is_user_turn


def signature(message: AIMessage) -> str | None:
    if not message.tool_calls:
        return None
    calls = sorted(
        json.dumps([c.get("name"), c.get("args")], sort_keys=True, default=str)
        for c in message.tool_calls
    )
    return "\n".join(calls)


def repeats(messages: list[AnyMessage], window: int = 20) -> tuple[int, AIMessage | None]:
    """How often the latest tool-calling AI turn's signature occurs in this user turn."""
    turn: list[AIMessage] = []
    for m in reversed(messages):
        if is_user_turn(m):
            break
        if isinstance(m, AIMessage):
            turn.append(m)
    turn = turn[:window]
    latest = next((m for m in turn if m.tool_calls), None)
    if latest is None:
        return 0, None
    sig = signature(latest)
    return sum(1 for m in turn if signature(m) == sig), latest


def strip_tool_calls(message: AIMessage, note: str) -> AIMessage:
    extra = {k: v for k, v in message.additional_kwargs.items() if k not in ("tool_calls",)}
    extra.pop("function_call", None)
    # The note goes after the text, or as one more block of a list of blocks.
    content: str | list[str | dict[str, object]] = message.content
    if isinstance(content, str):
        content = f"{content}\n\n{note}".strip()
    else:
        content = [*content, {"type": "text", "text": note}]
    return message.model_copy(
        update={
            "content": content,
            "tool_calls": [],
            "invalid_tool_calls": [],
            "additional_kwargs": extra,
        }
    )


class LoopDetectionMiddleware(RequestProjection):
    state_schema = ThreadState

    def __init__(self, *, warn_repeats: int = 3, stop_repeats: int = 5, window: int = 20):
        super().__init__()
        self.warn_repeats = warn_repeats
        self.stop_repeats = max(stop_repeats, 2)
        self.window = window

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        n, latest = repeats(messages, self.window)
        if latest is None or latest is not messages[-1] or n < self.stop_repeats:
            return None
        names = ", ".join(sorted({c["name"] for c in latest.tool_calls}))
        note = (
            f"[Stopped: the same tool call ({names}) was repeated {n} times with the same "
            "arguments without making progress. Tell me how you would like to continue.]"
        )
        stopped = strip_tool_calls(latest, note)
        stopped.additional_kwargs["loop_stopped"] = {"repeats": n, "tools": names}
        return {"messages": [stopped]}

    def _project(self, request: ModelRequest) -> ModelRequest:
        n, latest = repeats(request.messages, self.window)
        if latest is None or n < self.warn_repeats:
            return request
        names = ", ".join(sorted({c["name"] for c in latest.tool_calls}))
        return with_system_note(
            request,
            f"<loop_warning>\nYou have called {names} with the same arguments {n} times in "
            "this turn and the results did not change. Do not repeat it: change your "
            "approach, or give your final answer now. At "
            f"{self.stop_repeats} repeats the run will be stopped.\n</loop_warning>",
        )
