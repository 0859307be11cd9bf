from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command, interrupt

from agent.helpers import make_agent, scripted, thread_config, user

ran: list[str] = []


@tool
def ask_clarification(question: str, options: list[str] | None = None) -> str:
    """Ask the user."""
    return str(interrupt({"type": "clarification", "question": question, "options": options}))


@tool
def side_effect(x: str) -> str:
    """Something that must wait for the answer."""
    ran.append(x)
    return "done"


async def test_interrupt_then_resume(tmp_path):
    model = scripted(
        [
            {
                "tool_calls": [
                    {
                        "name": "ask_clarification",
                        "args": {"question": "Which?", "options": ["A", "B"]},
                    },
                    {"name": "side_effect", "args": {"x": "early"}},
                ]
            },
            {"text": "you picked it"},
        ]
    )
    graph = make_agent(tmp_path, model, [ask_clarification, side_effect])
    cfg = thread_config()
    first = await graph.ainvoke(user("help me"), cfg)
    (intr,) = first["__interrupt__"]
    assert intr.value == {
        "type": "clarification",
        "question": "Which?",
        "options": ["A", "B"],
        "context": None,
    }
    # the question is already a message of the thread (DeerFlow's UI shows it from there)
    waiting = first["messages"][-1]
    assert isinstance(waiting, ToolMessage) and waiting.name == "ask_clarification"
    request = waiting.artifact["human_input"]
    assert request["kind"] == "human_input_request" and request["question"] == "Which?"
    assert [o["value"] for o in request["options"]] == ["A", "B"]
    # the sibling call was dropped by the clarification gate
    ai = next(m for m in first["messages"] if isinstance(m, AIMessage))
    assert [c["name"] for c in ai.tool_calls] == ["ask_clarification"]
    assert ran == []

    out = await graph.ainvoke(Command(resume="B"), cfg)
    (answer,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]  # replaced, one
    assert answer.content == "B" and answer.status != "error" and answer.id == waiting.id
    assert answer.artifact["human_input_response"]["value"] == "B"
    assert out["messages"][-1].content == "you picked it"
    assert ran == []
