"""Request projection + tool gate: slash-activated skills.

A human message that starts with ``/skill-name`` (an enabled skill of the run) activates
that skill for the turn: every model call until the next human message gets the skill's
body in its system message, and when the skill declares ``allowed-tools`` the model is
offered only those tools and a call to any other is refused with an error result.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from pronghorn.agent.middlewares._util import text_of, with_system_note
from pronghorn.agent.state import ThreadState
from pronghorn.agent.tool_types import ToolResult
from pronghorn.agent.untyped import as_dict, as_list, as_mapping
from pronghorn.skills.frontmatter import split
from pronghorn.skills.model import RunSkill, SkillInvalid

SLASH = re.compile(r"^\s*/([a-z0-9]+(?:-[a-z0-9]+)*)(?=\s|$)")
RESERVED = frozenset({"new", "help", "status", "models", "memory", "goal"})


def requested_skill(messages: Sequence[BaseMessage]) -> str | None:
    """The skill named by a leading ``/name`` in the latest human message, if any."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            found = SLASH.match(text_of(message))
            name: str | None = found.group(1) if found else None
            return name if name not in RESERVED else None
    return None


def _tool_name(tool: object) -> str | None:
    fields = as_dict(tool)
    name = fields.get("name") if fields is not None else getattr(tool, "name", None)
    return name if isinstance(name, str) else None


def _read_body(skill: RunSkill) -> str:
    """The skill's instructions; a skill removed or unreadable since the run started gets a
    note instead (never a failed run)."""
    try:
        text = skill.skill_file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"(The skill's SKILL.md cannot be read right now: {type(exc).__name__}.)"
    try:
        return split(text)[1].strip()
    except SkillInvalid:
        return text


def activation_note(skill: RunSkill, body: str) -> str:
    tools = ""
    if skill.allowed_tools is not None:
        tools = (
            f"\nWhile it is active you may use only these tools: {', '.join(skill.allowed_tools)}."
        )
    return (
        f'<active_skill name="{skill.name}" location="{skill.location}">\n'
        f"The user activated the {skill.name} skill for this request: follow its "
        f"instructions below. Its files are under {skill.location.rsplit('/', 1)[0]}.{tools}\n\n"
        f"{body}\n</active_skill>"
    )


class SkillActivationMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, skills: Sequence[RunSkill]) -> None:
        super().__init__()
        self.skills = {s.name: s for s in skills}

    def active(self, messages: Sequence[BaseMessage]) -> RunSkill | None:
        name = requested_skill(messages)
        return self.skills.get(name) if name else None

    def _apply(self, request: ModelRequest, skill: RunSkill, body: str) -> ModelRequest:
        request = with_system_note(request, activation_note(skill, body))
        if skill.allowed_tools is not None:
            allowed = set(skill.allowed_tools)
            request = request.override(tools=[t for t in request.tools if _tool_name(t) in allowed])
        return request

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        skill = self.active(request.messages)
        if skill is None:
            return handler(request)
        return handler(self._apply(request, skill, _read_body(skill)))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        skill = self.active(request.messages)
        if skill is None:
            return await handler(request)
        body = await asyncio.to_thread(_read_body, skill)
        return await handler(self._apply(request, skill, body))

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        state = as_mapping(request.state) or {}
        # the state's ``messages`` channel holds BaseMessages (``add_messages``)
        messages = cast("list[BaseMessage]", list(as_list(state.get("messages")) or []))
        skill = self.active(messages)
        name = str(request.tool_call.get("name") or "")
        if skill is None or skill.allowed_tools is None or name in skill.allowed_tools:
            return None
        return ToolMessage(
            content=(
                f"Error: the {skill.name} skill is active and allows only these tools: "
                f"{', '.join(skill.allowed_tools)}. {name} is not one of them."
            ),
            tool_call_id=request.tool_call.get("id") or "",
            name=name,
            status="error",
        )

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        return self._refusal(request) or handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        return self._refusal(request) or await handler(request)
