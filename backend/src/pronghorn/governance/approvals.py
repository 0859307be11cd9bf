"""Tool approval policy: which calls need a human OK, and what an answer means.

A pattern is a tool name, a shell-style pattern (``mcp_*``) or a group: ``@shell``,
``@write``, ``@web``, ``@mcp`` (tools whose metadata says they come from MCP) or ``@all``.
The config's list is the floor; an assistant (or a run) can only add to it through its
context key ``approvals``, never remove from it, so a client cannot turn a required
approval off.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

INTERRUPT_TYPE = "tool_approval"
GROUPS: dict[str, frozenset[str]] = {
    "@shell": frozenset({"bash"}),
    "@write": frozenset({"write_file", "str_replace"}),
    "@web": frozenset({"web_search", "web_fetch"}),
}
NEVER = frozenset({"ask_clarification"})  # asking the user is never gated


# A run's context: free-form JSON from the request and the assistant.
def extra_patterns(context: Mapping[str, object] | None) -> list[str]:
    """The additions a run's (merged assistant + request) context asks for."""
    raw: object = (context or {}).get("approvals")
    if isinstance(raw, Mapping):
        raw = cast(Mapping[str, object], raw).get("tools")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [str(p) for p in cast(list[object], raw) if isinstance(p, str) and p.strip()]
    return []


def matches(pattern: str, tool: str, *, is_mcp: bool) -> bool:
    pattern = pattern.strip()
    if pattern == "@all":
        return True
    if pattern == "@mcp":
        return is_mcp
    if pattern in GROUPS:
        return tool in GROUPS[pattern]
    return fnmatch.fnmatchcase(tool, pattern)


def needs_approval(tool: str, patterns: Iterable[str], *, is_mcp: bool = False) -> bool:
    if tool in NEVER:
        return False
    return any(matches(p, tool, is_mcp=is_mcp) for p in patterns)


@dataclass(frozen=True, slots=True)
class Decision:
    approved: bool
    reason: str | None = None


# Tool arguments and the interrupt payload: free-form JSON.
def request_payload(tool: str, args: Mapping[str, object], call_id: str) -> dict[str, object]:
    return {"type": INTERRUPT_TYPE, "tool": tool, "args": dict(args), "call_id": call_id}


def decide(answer: object, call_id: str) -> Decision | None:
    """What a resume value says about the call ``call_id``; None when it is not an answer
    to this call (another call's id, or not an approval answer): it is ignored."""
    if isinstance(answer, bool):
        return Decision(approved=answer)
    if not isinstance(answer, Mapping):
        return None
    body = cast(Mapping[str, object], answer)
    answered = body.get("call_id")
    if answered is not None and answered != call_id:
        return None
    approved = body.get("approved")
    if not isinstance(approved, bool):
        return None
    reason = body.get("reason")
    return Decision(approved=approved, reason=str(reason) if reason is not None else None)


def refusal_text(tool: str, reason: str | None) -> str:
    why = f": {reason}" if reason else ""
    return (
        f"The user did not approve this {tool} call{why}. It was not run. Do not retry it "
        "unchanged; ask the user or take another way."
    )
