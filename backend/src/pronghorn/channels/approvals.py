"""Tool approvals asked in the chat (docs/governance.md, "Tool approvals").

A run that interrupts with `{"type": "tool_approval", "tool", "args", "call_id"}` gets a
short question in the chat: the tool and a preview of its arguments (truncated; values of
secret-looking keys, bearer tokens and well-known key formats masked). The user's next
message answers it: `approve` / `yes` resumes with `{"approved": true}`, `deny [reason]` /
`no [reason]` with `{"approved": false, "reason"}`; anything else is asked again. Several
approvals pending at once are answered together, keyed by interrupt id (LangGraph's rule).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from pronghorn.governance.approvals import INTERRUPT_TYPE

MAX_VALUE = 120  # characters of one argument value shown
MAX_ARGS = 400  # characters of all arguments of one call shown
MASK = "****"
APPROVE_WORDS = frozenset({"approve", "approved", "yes", "y", "ok", "allow"})
DENY_WORDS = frozenset({"deny", "denied", "no", "n", "reject", "refuse"})
HOW_TO_ANSWER = "Reply **approve** (or yes) to run it, or **deny** [reason] (or no) to refuse."

_SECRET_KEY = re.compile(
    r"(?i)(pass(word|wd)?|secret|token|api[_-]?key|auth(orization)?|credential|cookie|private)"
)
_SECRET_VALUE = re.compile(
    r"(?i)(bearer\s+|basic\s+)[A-Za-z0-9._~+/=-]+"
    r"|\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]+|\bxapp-[A-Za-z0-9-]+"
    r"|\bgh[pousr]_[A-Za-z0-9]{16,}|\bAKIA[0-9A-Z]{16}\b"
    r"|((?:password|passwd|secret|token|api[_-]?key)\s*[=:]\s*)\S+"
)


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    tool: str
    args: Mapping[str, object]
    call_id: str
    interrupt_id: str | None


@dataclass(frozen=True, slots=True)
class Answer:
    approved: bool
    reason: str | None = None


def requests_of(interrupts: Sequence[object]) -> list[ApprovalRequest]:
    """The pending tool approvals among interrupts (`{"id", "value"}` items)."""
    out: list[ApprovalRequest] = []
    for item in interrupts:
        if not isinstance(item, Mapping):
            continue
        entry = cast(Mapping[str, object], item)
        value = entry.get("value")
        if not isinstance(value, Mapping):
            continue
        v = cast(Mapping[str, object], value)
        if v.get("type") != INTERRUPT_TYPE:
            continue
        args = v.get("args")
        interrupt_id = entry.get("id")
        out.append(
            ApprovalRequest(
                tool=str(v.get("tool") or "?"),
                args=cast(Mapping[str, object], args) if isinstance(args, Mapping) else {},
                call_id=str(v.get("call_id") or ""),
                interrupt_id=str(interrupt_id) if interrupt_id else None,
            )
        )
    return out


def _mask_text(text: str) -> str:
    def keep_prefix(m: re.Match[str]) -> str:
        prefix = m.group(1) or m.group(len(m.groups())) or ""
        return f"{prefix}{MASK}"

    return _SECRET_VALUE.sub(keep_prefix, text)


def _masked(value: object) -> object:
    """Nested mappings and lists with the values of secret-looking keys masked."""
    if isinstance(value, Mapping):
        items = cast(Mapping[object, object], value).items()
        return {str(k): MASK if _SECRET_KEY.search(str(k)) else _masked(v) for k, v in items}
    if isinstance(value, list):
        return [_masked(v) for v in cast(list[object], value)]
    return value


def _shown(key: str, value: object) -> str:
    if _SECRET_KEY.search(key):
        return MASK
    text = value if isinstance(value, str) else json.dumps(_masked(value), default=str)
    text = _mask_text(text).replace("\n", " ").replace("`", "'")
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def preview(args: Mapping[str, object]) -> str:
    """`key: value` pairs, masked and cut, at most MAX_ARGS characters."""
    shown = "; ".join(f"{k}: {_shown(str(k), v)}" for k, v in args.items())
    return shown if len(shown) <= MAX_ARGS else shown[: MAX_ARGS - 1] + "…"


def question(requests: Sequence[ApprovalRequest]) -> str:
    """The chat message asking for approval (Markdown)."""
    if len(requests) == 1:
        lines = [f"The agent wants to run **{requests[0].tool}**."]
    else:
        lines = [f"The agent wants to run {len(requests)} tool calls:"]
    for r in requests:
        args = preview(r.args)
        lines.append(f"- {r.tool}: `{args}`" if args else f"- {r.tool}")
    lines.append(HOW_TO_ANSWER if len(requests) == 1 else HOW_TO_ANSWER + " (all of them)")
    return "\n".join(lines)


def parse_answer(text: str) -> Answer | None:
    """approve / yes → approved; deny / no [reason] → refused; anything else: None."""
    words = text.strip().split(None, 1)
    if not words:
        return None
    first = words[0].lower().rstrip(".!,:")
    rest = words[1].strip() if len(words) > 1 else ""
    if first in APPROVE_WORDS and not rest:
        return Answer(approved=True)
    if first in DENY_WORDS:
        return Answer(approved=False, reason=rest or None)
    return None


def resume_value(requests: Sequence[ApprovalRequest], answer: Answer) -> object:
    """The `command.resume` answering every pending request with `answer`."""

    def one(r: ApprovalRequest) -> dict[str, object]:
        body: dict[str, object] = {"approved": answer.approved, "call_id": r.call_id}
        if not answer.approved and answer.reason:
            body["reason"] = answer.reason
        return body

    if len(requests) == 1:
        return one(requests[0])
    return {r.interrupt_id: one(r) for r in requests if r.interrupt_id}
