"""Response guard of a sub-agent: stop it after ``max_turns`` model calls.

When the sub-agent's ``max_turns``-th response still asks for tools, those calls are
removed and the message is marked ``additional_kwargs.subagent_stop = "max_turns"``, so
the sub-agent ends there and its runner reports the stop reason.
"""

from __future__ import annotations

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares.loop_detection import strip_tool_calls
from pronghorn.agent.state import ThreadState

STOP_KEY = "subagent_stop"


class TurnLimitMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, max_turns: int) -> None:
        super().__init__()
        self.max_turns = max_turns

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        latest = messages[-1]
        turns = sum(1 for m in messages if isinstance(m, AIMessage))
        if turns < self.max_turns or not latest.tool_calls:
            return None
        stopped = strip_tool_calls(
            latest, f"[Stopped: the sub-agent reached its limit of {self.max_turns} turns.]"
        )
        stopped.additional_kwargs[STOP_KEY] = "max_turns"
        return {"messages": [stopped]}
