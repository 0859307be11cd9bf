"""Tools inside a real LangGraph graph (ToolNode injects ToolRuntime; a checkpointer keeps
state): ask_clarification interrupts and resumes; present_files and write_todos update state."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command
from typing_extensions import TypedDict

from tools.conftest import ToolKit


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    artifacts: Annotated[list, operator.add]
    todos: list


def _graph(kit: ToolKit, calls: list[dict[str, Any]]):
    def model(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    builder = StateGraph(State)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode(list(kit.tools.values())))
    builder.add_edge(START, "model")
    builder.add_edge("model", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=InMemorySaver())


def _config(kit: ToolKit) -> RunnableConfig:
    return {"configurable": {"thread_id": kit.thread_id, "user_id": "default"}}


async def test_clarification_interrupts_then_resumes(kit: ToolKit) -> None:
    call = {
        "name": "ask_clarification",
        "id": "c1",
        "args": {
            "question": "Which colour?",
            "options": ["red", "blue"],
            "context": "for the logo",
        },
    }
    graph = _graph(kit, [call])
    first = await graph.ainvoke({"messages": [HumanMessage("draw")]}, _config(kit))
    (intr,) = first["__interrupt__"]
    assert intr.value == {
        "type": "clarification",
        "question": "Which colour?",
        "options": ["red", "blue"],
        "context": "for the logo",
    }
    snapshot = await graph.aget_state(_config(kit))
    assert snapshot.next == ("tools",)
    final = await graph.ainvoke(Command(resume="blue"), _config(kit))
    answer = final["messages"][-1]
    assert isinstance(answer, ToolMessage)
    assert (answer.content, answer.tool_call_id, answer.name) == ("blue", "c1", "ask_clarification")


async def test_clarification_without_options(kit: ToolKit) -> None:
    graph = _graph(kit, [{"name": "ask_clarification", "id": "c2", "args": {"question": "Why?"}}])
    first = await graph.ainvoke({"messages": [HumanMessage("x")]}, _config(kit))
    assert first["__interrupt__"][0].value["options"] is None
    final = await graph.ainvoke(Command(resume={"answer": "because"}), _config(kit))
    assert final["messages"][-1].content == "because"


async def test_state_updates_through_tool_node(kit: ToolKit) -> None:
    out = "/mnt/user-data/outputs/r.md"
    await kit.text("write_file", description="d", path=out, content="# r\n")
    calls = [
        {"name": "present_files", "id": "p1", "args": {"filepaths": [out]}},
        {
            "name": "write_todos",
            "id": "t1",
            "args": {"todos": [{"content": "write", "status": "completed"}]},
        },
        {"name": "read_file", "id": "r1", "args": {"description": "d", "path": "/etc/passwd"}},
    ]
    graph = _graph(kit, calls)
    final = await graph.ainvoke({"messages": [HumanMessage("go")]}, _config(kit))
    assert final["artifacts"] == [out]
    assert final["todos"] == [{"content": "write", "status": "completed"}]
    results = {m.tool_call_id: m for m in final["messages"] if isinstance(m, ToolMessage)}
    assert results["p1"].status == "success" and results["t1"].status == "success"
    assert results["r1"].status == "error" and "Access denied" in results["r1"].content


async def test_tools_need_a_thread(kit: ToolKit) -> None:
    graph = _graph(kit, [{"name": "ls", "id": "l1", "args": {"description": "d", "path": "."}}])
    final = await graph.ainvoke(
        {"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": str(uuid.uuid4())}}
    )
    # a thread id that is a UUID works even without user_id (user "default")
    assert final["messages"][-1].status == "success"
