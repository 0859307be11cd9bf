from __future__ import annotations

from typing import Annotated

from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.types import Command

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.options import AgentOptions

LONG = "word " * 1000


@tool
def write_todos(todos: list[dict], tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Replace the todo list."""
    return Command(
        update={
            "todos": todos,
            "messages": [ToolMessage("Updated todo list", tool_call_id=tool_call_id)],
        }
    )


async def test_reminder_when_todos_scrolled_out(tmp_path):
    todos = [
        {"content": "Gather data", "status": "completed"},
        {"content": "Write report", "status": "in_progress"},
    ]
    model = scripted(
        [{"tool_calls": [{"name": "write_todos", "args": {"todos": todos}}]}],
        fallback={"text": "ok " + "z" * 100},
        cursor="calls",  # summarization removes AI messages from the request
    )
    graph = make_agent(
        tmp_path,
        model,
        [write_todos],
        options=AgentOptions(is_plan_mode=True),
        summarization_trigger_tokens=1500,
    )
    cfg = thread_config()
    out = await graph.ainvoke(user("plan the report"), cfg)
    assert out["todos"] == todos
    # visible write_todos call: no reminder
    assert all("todo_reminder" not in r.messages[0].content for r in model.requests)
    assert "plan_mode" in model.requests[0].messages[0].content
    for i in range(3):
        await graph.ainvoke(user(f"more {i} {LONG}"), cfg)
    system = model.requests[-1].messages[0].content
    assert "<todo_reminder>" in system
    assert "[x] Gather data" in system and "[~] Write report" in system
