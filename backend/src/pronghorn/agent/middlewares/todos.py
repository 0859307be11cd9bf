"""Request projection (plan mode): remind the model of its todo list.

In plan mode the agent has ``write_todos``, which replaces state ``todos``. When the last
``write_todos`` call has scrolled out of what the model sees (summarized away), the
current list is added to the system message of the request, so the plan is never lost.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage

from pronghorn.agent.middlewares._projecting import RequestProjection
from pronghorn.agent.middlewares._util import with_system_note
from pronghorn.agent.state import StateObject, ThreadState

TOOL = "write_todos"


def todo_note(todos: list[StateObject]) -> str:
    marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
    lines = [f"{marks.get(str(t.get('status', '')), '[ ]')} {t.get('content', '')}" for t in todos]
    return (
        "<todo_reminder>\nYour current todo list (earlier write_todos calls are no longer "
        "visible). Keep it up to date with write_todos:\n" + "\n".join(lines) + "\n</todo_reminder>"
    )


def write_todos_visible(messages: Sequence[BaseMessage]) -> bool:
    return any(
        isinstance(m, AIMessage) and any(c.get("name") == TOOL for c in m.tool_calls)
        for m in messages
    )


class TodoReminderMiddleware(RequestProjection):
    state_schema = ThreadState

    def _project(self, request: ModelRequest) -> ModelRequest:
        todos: list[StateObject] = request.state.get("todos") or []
        if not todos or write_todos_visible(request.messages):
            return request
        return with_system_note(request, todo_note(todos))
