"""A clarifying question as a message: the ToolMessage of an ``ask_clarification`` call
whose ``artifact`` carries DeerFlow's human-input request, and its answered form.

While the question waits, the artifact is ``{"human_input": request}``; once answered by
a resume, the message's content is the answer and the artifact also holds
``"human_input_response"`` (DeerFlow's response shape, ``response_kind: "text"``).

    request = {"version": 1, "kind": "human_input_request", "source": "ask_clarification",
               "request_id": <tool call id>, "tool_call_id": <same>, "question": "...",
               "context": "..." | None, "input_mode": "free_text" | "choice_with_other",
               "options": [{"id": "option-1", "label": "...", "value": "..."}]}
"""

from __future__ import annotations

import json
from typing import Literal, NotRequired, TypedDict, cast

from langchain_core.messages import ToolCall, ToolMessage

from pronghorn.agent.untyped import as_dict

TOOL = "ask_clarification"
MAX_OPTIONS = 10


class HumanInputOption(TypedDict):
    id: str
    label: str
    value: str


class HumanInputRequest(TypedDict):
    """The request ``question_message`` writes (see the module docstring)."""

    version: int
    kind: Literal["human_input_request"]
    source: str
    request_id: str
    tool_call_id: str
    question: str
    context: str | None
    input_mode: Literal["free_text", "choice_with_other"]
    options: NotRequired[list[HumanInputOption]]


def answer_text(value: object) -> str:
    """The resume value as text (a string, or ``{"answer": ...}``, or anything JSON-able)."""
    if isinstance(value, str):
        return value
    answer = (as_dict(value) or {}).get("answer")
    if isinstance(answer, str):
        return answer
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def choices(options: object) -> list[str]:
    """Up to ten distinct, non-empty option texts, in order."""
    if not isinstance(options, list):
        return []
    out: list[str] = []
    for raw in cast("list[object]", options):
        text = str(raw).strip()
        if text and text not in out:
            out.append(text)
    return out[:MAX_OPTIONS]


def question_message(call: ToolCall) -> ToolMessage | None:
    """The waiting ToolMessage of an ``ask_clarification`` call; None for an empty
    question (the tool then answers it with an error)."""
    args = call.get("args") or {}
    question = args.get("question")
    call_id = call.get("id")
    if not isinstance(question, str) or not question.strip() or not call_id:
        return None
    options = choices(args.get("options"))
    context = args.get("context")
    request: HumanInputRequest = {
        "version": 1,
        "kind": "human_input_request",
        "source": TOOL,
        "request_id": call_id,
        "tool_call_id": call_id,
        "question": question.strip(),
        "context": context if isinstance(context, str) and context.strip() else None,
        "input_mode": "choice_with_other" if options else "free_text",
    }
    if options:
        request["options"] = [
            {"id": f"option-{i}", "label": text, "value": text}
            for i, text in enumerate(options, start=1)
        ]
    lines = [f"Asked the user, waiting for the answer: {request['question']}"]
    lines += [f"- {text}" for text in options]
    return ToolMessage(
        content="\n".join(lines),
        tool_call_id=call_id,
        name=TOOL,
        id=f"clarification-{call_id}",
        artifact={"human_input": request},
    )


def pending_request(message: ToolMessage) -> HumanInputRequest | None:
    """The request of a question message still waiting for its answer, else None."""
    if message.name != TOOL or not isinstance(message.artifact, dict):
        return None
    artifact = cast("dict[str, object]", message.artifact)
    request = artifact.get("human_input")
    if not isinstance(request, dict) or "human_input_response" in artifact:
        return None
    # Our own write (question_message), read back from the checkpoint as it was stored.
    return cast("HumanInputRequest", request)


def answered_message(
    message: ToolMessage, request: HumanInputRequest, answer: object
) -> ToolMessage:
    """The question message replaced (same id) by its answer."""
    text = answer_text(answer)
    response = {
        "version": 1,
        "kind": "human_input_response",
        "source": TOOL,
        "request_id": request["request_id"],
        "response_kind": "text",
        "value": text,
    }
    return message.model_copy(
        update={
            "content": text,
            "artifact": {"human_input": request, "human_input_response": response},
        }
    )
