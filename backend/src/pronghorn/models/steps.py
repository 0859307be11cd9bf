"""The plain-dict step and rule format of :class:`ScriptedChatModel` (see docs/models.md).

Steps and rules come from YAML (``models[].script`` / ``models[].rules``), so they are
validated here with ``extra="forbid"``: a typo in a script fails when the model is built,
not in the middle of a run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import cast

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pronghorn.models.notes import is_user_turn

_RULE_KEYS = ("match", "regex")

# A step as written by hand (a config's `script`, a responder's answer): plain data of any
# field types, which `as_step` validates into a Step.
StepSpec = dict[str, object]


class ToolCallSpec(BaseModel):
    """One tool call a step makes. Without ``id`` a fresh unique id is generated per call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    args: dict[str, object] = Field(default_factory=dict)  # the tool's JSON arguments
    id: str | None = None


class UsageSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    total_tokens: int | None = Field(None, ge=0)


class Step(BaseModel):
    """What one model call produces."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    text: str = Field("", description="Message content; streamed word by word.")
    reasoning: str | None = Field(None, description="additional_kwargs.reasoning_content.")
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    usage: UsageSpec | None = Field(None, description="Token counts; estimated when absent.")
    finish_reason: str | None = Field(None, description="Default: tool_calls or stop.")
    response_metadata: dict[str, object] = Field(default_factory=dict)
    latency_s: float = Field(0.0, ge=0, description="Wait before the first chunk.")
    delay_s: float | None = Field(None, ge=0, description="Wait between streamed chunks.")
    raise_: str | None = Field(
        None,
        alias="raise",
        description="Raise instead of answering: rate_limit, server_error, overloaded, auth, "
        "bad_request, context_length, timeout, connection, or any text (generic error).",
    )
    message: str | None = Field(None, description="Message of the raised error.")
    times: int | None = Field(
        1,
        ge=1,
        description="How many attempts of this turn raise before the next step answers "
        "(null: always). Only used by cursor=ai_messages and by rules.",
    )
    raise_after_chunks: int | None = Field(
        None, ge=0, description="When streaming, raise after this many chunks (a dropped stream)."
    )

    @property
    def is_error(self) -> bool:
        return self.raise_ is not None and self.raise_after_chunks is None

    @property
    def effective_finish_reason(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


class Rule(BaseModel):
    """Match the last human message, answer with ``steps`` (or inline step keys).

    A rule with neither ``match`` nor ``regex`` matches everything (a catch-all).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: str | list[str] | None = Field(None, description="Case-insensitive substring(s).")
    regex: str | None = Field(None, description="Python regex, searched in the message.")
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _inline_step(cls, data: object) -> object:  # the raw input, before validation
        if not isinstance(data, dict):
            return data
        rule = cast(dict[str, object], data)
        if "steps" in rule:
            return rule
        inline = dict(rule)
        step = {k: inline.pop(k) for k in list(inline) if k not in _RULE_KEYS}
        inline["steps"] = [step]
        return inline

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regex {value!r}: {exc}") from exc
        return value

    def matches(self, text: str) -> bool:
        if self.regex is not None and not re.search(self.regex, text):
            return False
        if self.match is not None:
            needles = [self.match] if isinstance(self.match, str) else self.match
            low = text.lower()
            if not any(n.lower() in low for n in needles):
                return False
        return True


def as_step(value: Step | StepSpec) -> Step:
    return value if isinstance(value, Step) else Step.model_validate(value)


def message_text(message: BaseMessage) -> str:
    """The plain text of a message whose content may be a list of blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


def last_human_index(messages: list[BaseMessage]) -> int:
    """Index of the last message the user wrote (request notes are skipped); -1 if none."""
    for i in range(len(messages) - 1, -1, -1):
        if is_user_turn(messages[i]):
            return i
    return -1


def count_ai(messages: list[BaseMessage]) -> int:
    return sum(1 for m in messages if isinstance(m, AIMessage))


def split_words(text: str) -> list[str]:
    """Word-sized pieces that join back to exactly ``text`` (trailing spaces kept)."""
    return [p for p in re.split(r"(?<=\s)(?=\S)", text) if p]


def split_fixed(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def estimate_tokens(text: str) -> int:
    """A plausible token count: ~4 characters a token."""
    return math.ceil(len(text) / 4) if text else 0


def estimate_input_tokens(
    messages: list[BaseMessage], tools: Sequence[Mapping[str, object]]
) -> int:
    total = sum(4 + estimate_tokens(message_text(m)) for m in messages)
    for m in messages:
        if isinstance(m, AIMessage) and m.tool_calls:
            total += estimate_tokens(json.dumps([tc["args"] for tc in m.tool_calls]))
    if tools:
        total += estimate_tokens(json.dumps(tools))
    return max(total, 1)


def group_turns(steps: list[Step]) -> list[tuple[list[Step], Step | None]]:
    """Attach error steps to the answering step that follows them.

    ``[err, err, ok1, ok2, err]`` becomes ``[([err, err], ok1), ([], ok2), ([err], None)]``:
    one entry per turn; a turn first raises its preludes, then answers.
    """
    turns: list[tuple[list[Step], Step | None]] = []
    pending: list[Step] = []
    for step in steps:
        if step.is_error:
            pending.append(step)
        else:
            turns.append((pending, step))
            pending = []
    if pending:
        turns.append((pending, None))
    return turns


def pick_in_turn(turn: tuple[list[Step], Step | None], attempt: int) -> Step:
    """The step to play on the ``attempt``-th (0-based) call of a turn."""
    preludes, answer = turn
    for err in preludes:
        if err.times is None or attempt < err.times:
            return err
        attempt -= err.times
    if answer is None:
        return preludes[-1]
    return answer
