"""Request projection: summarize the older part of a long conversation.

``before_model`` estimates the size of what the model would see (~4 characters a token).
Past ``trigger_tokens``, the older messages (everything but a recent tail of about a third
of the trigger) are summarized — with the previous summary folded in — and the result is
stored in state ``summary = {"text", "upto_id"}``. It is **not** a chat message: the
``messages`` channel is untouched, and the summarizing model call is tagged ``nostream``
so LangGraph's ``messages`` stream mode never shows its tokens. ``wrap_model_call`` then
replaces every message up to ``upto_id`` with one ``<conversation_summary>`` message, for
the model request only. The cut never separates tool calls from their results.

Without a summary model (scripted/demo models) a compact local digest is used instead.
``before_compact`` (the memory flush hook) is given the messages about to be summarized.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence

from langchain.agents.middleware import ModelRequest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    get_buffer_string,
)
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._projecting import RequestProjection
from pronghorn.agent.middlewares._util import text_of
from pronghorn.agent.state import StateObject, ThreadState
from pronghorn.agent.untyped import as_dict

log = logging.getLogger("pronghorn.agent.summary")

INTERNAL_TAGS = [TAG_NOSTREAM, "pronghorn:internal", "pronghorn:summary"]
MAX_MESSAGE_CHARS = 4000
PROMPT = (
    "Summarize the earlier part of a conversation between a user and an AI agent so the "
    "agent can continue the work without it. Keep: the user's goals and constraints, "
    "decisions made, facts learned, file paths created or used, and open tasks. Be concise "
    "(at most ~400 words), in plain text.\n\n"
)


def estimate_tokens(messages: Sequence[BaseMessage]) -> int:
    total = 0
    for m in messages:
        total += 4 + len(text_of(m)) // 4
        if isinstance(m, AIMessage) and m.tool_calls:
            total += len(json.dumps([c.get("args") for c in m.tool_calls], default=str)) // 4
    return total


def summary_message(text: str) -> HumanMessage:
    return HumanMessage(
        content=(
            "<conversation_summary>\nThe earlier part of this conversation was summarized:\n"
            f"{text}\n</conversation_summary>"
        ),
        name="summary",
    )


def visible_messages(messages: list[AnyMessage], summary: StateObject | None) -> int:
    """Index of the first message not covered by ``summary``."""
    upto = (summary or {}).get("upto_id")
    if not upto:
        return 0
    for i, m in enumerate(messages):
        if m.id == upto:
            return i + 1
    return 0


def _summary_text(summary: StateObject | None) -> str | None:
    """The summary's text (None without one, or when the stored value is not a string)."""
    text = (summary or {}).get("text")
    return text if isinstance(text, str) else None


def choose_cut(messages: list[AnyMessage], keep_tokens: int) -> int:
    """How many leading messages to summarize (0: nothing sensible to cut)."""
    kept = 0
    cut = len(messages)
    while cut > 0:
        size = estimate_tokens([messages[cut - 1]])
        if kept + size > keep_tokens and cut < len(messages):
            break
        kept += size
        cut -= 1
    # never start the kept tail with tool results (they belong to the call before them)
    while cut < len(messages) and isinstance(messages[cut], ToolMessage):
        cut += 1
    if cut >= len(messages):
        # the tail is one long tool exchange: keep at least the last message
        cut = len(messages) - 1
        while cut > 0 and isinstance(messages[cut], ToolMessage):
            cut -= 1
    return max(cut, 0)


def local_digest(previous: str | None, messages: Sequence[BaseMessage], max_chars: int) -> str:
    lines = [previous] if previous else []
    for m in messages:
        text = " ".join(text_of(m).split())
        if isinstance(m, AIMessage) and m.tool_calls:
            text += " [called: " + ", ".join(c["name"] for c in m.tool_calls) + "]"
        if text:
            lines.append(f"{m.type}: {text[:200]}")
    out = "\n".join(lines)
    return out[-max_chars:]


class SummarizationMiddleware(RequestProjection):
    state_schema = ThreadState

    def __init__(
        self,
        *,
        trigger_tokens: int = 60000,
        model: BaseChatModel | None = None,
        keep_fraction: float = 1 / 3,
        before_compact: Callable[[Sequence[BaseMessage]], None] | None = None,
    ) -> None:
        super().__init__()
        self.before_compact = before_compact  # e.g. memory: sees what is compacted first
        self.trigger_tokens = trigger_tokens
        self.model = model
        self.keep_tokens = max(1, int(trigger_tokens * keep_fraction))

    async def _summarize(self, previous: str | None, messages: Sequence[BaseMessage]) -> str:
        if self.model is None:
            return local_digest(previous, messages, self.trigger_tokens)
        trimmed = [
            m.model_copy(update={"content": text_of(m)[:MAX_MESSAGE_CHARS]}) for m in messages
        ]
        body = PROMPT
        if previous:
            body += f"Summary so far:\n{previous}\n\nNew messages:\n"
        body += get_buffer_string(trimmed)
        try:
            reply = await self.model.ainvoke(
                [HumanMessage(content=body)],
                config={"tags": INTERNAL_TAGS, "metadata": {"lc_source": "summarization"}},
            )
            text = text_of(reply).strip()
            return text or local_digest(previous, messages, self.trigger_tokens)
        except Exception as exc:  # a failed summary must not fail the run
            log.warning("summary failed: %s", exc)
            return local_digest(previous, messages, self.trigger_tokens)

    async def abefore_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = list(state.get("messages") or [])
        summary = state.get("summary") or None
        start = visible_messages(messages, summary)
        visible = messages[start:]
        previous = _summary_text(summary)
        size = estimate_tokens(visible) + (len(previous) // 4 if previous else 0)
        if size <= self.trigger_tokens:
            return None
        cut = choose_cut(visible, self.keep_tokens)
        if cut <= 0:
            return None
        if self.before_compact is not None:
            self.before_compact(visible[:cut])
        text = await self._summarize(previous, visible[:cut])
        return {"summary": {"text": text, "upto_id": visible[cut - 1].id}}

    def _project(self, request: ModelRequest) -> ModelRequest:
        summary = as_dict(request.state.get("summary"))
        text = _summary_text(summary)
        if not text:
            return request
        start = visible_messages(request.messages, summary)
        if start == 0:
            return request
        messages = [summary_message(text), *request.messages[start:]]
        return request.override(messages=messages)
