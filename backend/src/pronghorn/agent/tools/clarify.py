"""``ask_clarification``: pause the run with a question; the user's answer resumes it."""

from __future__ import annotations

import json
from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from pronghorn.agent.tools._common import failure
from pronghorn.agent.tools.deps import ToolDeps

MAX_OPTIONS = 10


def answer_text(value: Any) -> str:
    """The resume value as text (a string, or ``{"answer": ...}``, or anything JSON-able)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        return value["answer"]
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def clarify_tools(deps: ToolDeps) -> list[BaseTool]:
    @tool("ask_clarification", parse_docstring=True)
    async def ask_clarification(
        question: str,
        runtime: ToolRuntime,
        options: list[str] | None = None,
        context: str | None = None,
    ) -> object:
        """Ask the user a question and wait for the answer. Use it when the request is
        ambiguous or a choice is risky; do not use it for things you can find out yourself.

        Args:
            question: One clear question.
            options: Up to 10 short choices the user can pick from (optional).
            context: Why you ask (optional, shown with the question).
        """
        if not isinstance(question, str) or not question.strip():
            return failure(runtime, "ask_clarification", "question must not be empty.")
        choices = [str(o).strip() for o in (options or []) if str(o).strip()][:MAX_OPTIONS]
        answer = interrupt(
            {
                "type": "clarification",
                "question": question.strip(),
                "options": choices or None,
                "context": context,
            }
        )
        return answer_text(answer)

    return [ask_clarification]
