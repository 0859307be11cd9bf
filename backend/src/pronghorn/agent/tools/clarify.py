"""``ask_clarification``: pause the run with a question; the user's answer resumes it."""

from __future__ import annotations

from langchain.tools import tool
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from pronghorn.agent.human_input import answer_text, choices
from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import failure
from pronghorn.agent.tools.deps import ToolDeps


def clarify_tools(deps: ToolDeps) -> list[BaseTool]:
    @tool("ask_clarification", parse_docstring=True)
    async def ask_clarification(
        question: str,
        runtime: AgentToolRuntime,
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
        if not question.strip():
            return failure(runtime, "ask_clarification", "question must not be empty.")
        # The lead agent's ClarificationMiddleware asks before this runs (the call then
        # already has its answer); this interrupt serves agents built without it.
        picked = choices(options)
        answer = interrupt(
            {
                "type": "clarification",
                "question": question.strip(),
                "options": picked or None,
                "context": context,
            }
        )
        return answer_text(answer)

    return [ask_clarification]
