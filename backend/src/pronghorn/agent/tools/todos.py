"""``write_todos``: the agent's visible task list (replaces ``todos`` in the thread state)."""

from __future__ import annotations

from typing import Annotated, cast

from langchain.tools import tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import Field
from typing_extensions import TypedDict

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import failure
from pronghorn.agent.tools.deps import ToolDeps

STATUSES = ("pending", "in_progress", "completed")
MAX_TODOS = 50
MAX_CONTENT_CHARS = 500
_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoItem(TypedDict):
    content: Annotated[str, Field(description="The task, short and concrete.")]
    status: Annotated[
        str,
        Field(
            description="pending, in_progress or completed.",
            json_schema_extra={"enum": list(STATUSES)},
        ),
    ]


def validate_todos(todos: object) -> list[dict[str, str]]:
    """Clean todos, or raise ``ValueError`` with a message for the model."""
    if not isinstance(todos, list):
        raise ValueError("todos must be a list of {content, status} objects.")
    items = cast("list[object]", todos)
    if len(items) > MAX_TODOS:
        raise ValueError(f"Too many todos ({len(items)}); keep the list under {MAX_TODOS}.")
    out: list[dict[str, str]] = []
    for i, raw in enumerate(items, start=1):
        if not isinstance(raw, dict):
            raise ValueError(f"todo {i} must be an object with content and status.")
        item = cast("dict[str, object]", raw)
        content = str(item.get("content") or "").strip()
        status = str(item.get("status") or "").strip()
        if not content:
            raise ValueError(f"todo {i} has no content.")
        if len(content) > MAX_CONTENT_CHARS:
            raise ValueError(f"todo {i} is too long (max {MAX_CONTENT_CHARS} characters).")
        if status not in STATUSES:
            raise ValueError(f"todo {i} has status {status!r}; use one of: {', '.join(STATUSES)}.")
        out.append({"content": content, "status": status})
    return out


def todo_tools(deps: ToolDeps) -> list[BaseTool]:
    @tool("write_todos", parse_docstring=True)
    async def write_todos(todos: list[TodoItem], runtime: AgentToolRuntime) -> object:
        """Write the task list for a multi-step job (replaces the whole list; the user sees
        it). Keep exactly one item in_progress while working and mark items completed as soon
        as they are done. Skip it for simple one-step requests.

        Args:
            todos: The complete list, in order.
        """
        try:
            clean = validate_todos(todos)
        except ValueError as exc:
            return failure(runtime, "write_todos", str(exc))
        lines = "\n".join(f"{_MARK[t['status']]} {t['content']}" for t in clean)
        text = (
            f"Todo list updated ({len(clean)} items):\n{lines}" if clean else "Todo list cleared."
        )
        if sum(t["status"] == "in_progress" for t in clean) > 1:
            text += "\nNote: more than one item is in_progress; keep one at a time."
        message = ToolMessage(content=text, tool_call_id=runtime.tool_call_id, name="write_todos")
        return Command(update={"todos": clean, "messages": [message]})

    return [write_todos]
