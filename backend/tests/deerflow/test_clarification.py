"""Clarification (core/messages/human-input.ts): the question is a ToolMessage named
``ask_clarification`` whose artifact holds DeerFlow's human-input request, beside the
interrupt SDK clients and Pronghorn's UI answer; both ways of answering continue the run."""

from __future__ import annotations

from typing import Any

import httpx

from deerflow.conftest import StartApp
from deerflow.shapes import HUMAN_INPUT_REQUEST, assert_shape

API = "/api/langgraph"


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "assistant_id": "lead_agent",
        "input": {"messages": [{"type": "human", "content": [{"type": "text", "text": text}]}]},
        **extra,
    }


async def _asked(http: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    tid = (await http.post(f"{API}/threads", json={})).json()["thread_id"]
    r = await http.post(f"{API}/threads/{tid}/runs/wait", json=ask("which colour?"))
    assert r.status_code == 200, r.text
    (intr,) = r.json()["__interrupt__"]  # the interrupt stays, for SDK clients and our UI
    assert intr["value"] == {
        "type": "clarification",
        "question": "Which colour do you want?",
        "options": ["red", "blue"],
        "context": None,
    }
    thread = (await http.get(f"{API}/threads/{tid}")).json()
    assert thread["status"] == "interrupted"
    state = (await http.get(f"{API}/threads/{tid}/state")).json()
    question = state["values"]["messages"][-1]
    return tid, question


async def test_question_is_a_tool_message_deerflow_reads(make_app: StartApp) -> None:
    app = await make_app()
    async with app.http("alice") as http:
        _, question = await _asked(http)
    assert question["type"] == "tool" and question["name"] == "ask_clarification"
    request = question["artifact"]["human_input"]
    assert_shape(request, HUMAN_INPUT_REQUEST)
    assert request["question"] == "Which colour do you want?"
    assert request["input_mode"] == "choice_with_other"
    assert [(o["label"], o["value"]) for o in request["options"]] == [
        ("red", "red"),
        ("blue", "blue"),
    ]
    assert request["request_id"] == question["tool_call_id"]


async def test_resume_answers_it(make_app: StartApp) -> None:
    """Pronghorn's UI and SDK clients: Command(resume=...)."""
    app = await make_app()
    async with app.http("alice") as http:
        tid, question = await _asked(http)
        r = await http.post(
            f"{API}/threads/{tid}/runs/wait",
            json={"assistant_id": "lead_agent", "command": {"resume": "blue"}},
        )
        assert r.status_code == 200, r.text
        messages = r.json()["messages"]
        tools = [m for m in messages if m["type"] == "tool"]
        assert len(tools) == 1 and tools[0]["id"] == question["id"]  # replaced, not added
        assert tools[0]["content"] == "blue"
        assert tools[0]["artifact"]["human_input_response"]["value"] == "blue"
        assert messages[-1]["content"] == "painted it"
        assert (await http.get(f"{API}/threads/{tid}")).json()["status"] == "idle"


async def test_chat_box_answer_continues(make_app: StartApp) -> None:
    """DeerFlow's UI: the answer is a new run with the user's message, at its own path."""
    app = await make_app()
    async with app.http("alice") as http:
        tid, question = await _asked(http)
        r = await http.post(f"/api/threads/{tid}/runs/wait", json=ask("blue please"))
        assert r.status_code == 200, r.text
        messages = r.json()["messages"]
        assert [m["type"] for m in messages][-3:] == ["tool", "human", "ai"]
        assert messages[-3]["id"] == question["id"]  # the question stays the call's result
        assert messages[-1]["content"] == "painted it blue"
        assert (await http.get(f"{API}/threads/{tid}")).json()["status"] == "idle"
