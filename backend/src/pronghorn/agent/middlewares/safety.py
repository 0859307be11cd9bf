"""Response guard: a provider safety stop ends the turn without running tools.

When the provider reports a content-filter or refusal stop (OpenAI-compatible
``finish_reason: content_filter``, Anthropic ``stop_reason: refusal``, Gemini ``SAFETY``…),
tool calls in that message may be truncated or unsafe: they are removed, a short
explanation is appended, ``additional_kwargs.safety_stop`` is stamped, and a custom stream
event ``{"type": "safety_stop", "reason": ...}`` is emitted (``stream_mode=custom``).
"""

from __future__ import annotations

import logging

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares.loop_detection import strip_tool_calls
from pronghorn.agent.state import ThreadState

log = logging.getLogger("pronghorn.agent.safety")

SAFETY_REASONS = frozenset(
    {
        "content_filter",
        "refusal",
        "safety",
        "blocklist",
        "prohibited_content",
        "spii",
        "recitation",
        "image_safety",
    }
)
_FIELDS = ("finish_reason", "stop_reason")


def safety_reason(message: AIMessage) -> str | None:
    for source in (message.response_metadata or {}, message.additional_kwargs or {}):
        for key in _FIELDS:
            value = source.get(key)
            if isinstance(value, str) and value.strip().lower() in SAFETY_REASONS:
                return value.strip().lower()
    return None


class SafetyFinishReasonMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def after_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        message = messages[-1]
        reason = safety_reason(message)
        if reason is None or message.additional_kwargs.get("safety_stop"):
            return None
        suppressed = [c.get("name") for c in message.tool_calls]
        writer = getattr(runtime, "stream_writer", None)
        if writer is not None:
            try:
                writer({"type": "safety_stop", "reason": reason, "suppressed_tools": suppressed})
            except Exception:  # pragma: no cover - no stream consumer
                log.debug("safety_stop event not delivered", exc_info=True)
        log.warning("provider safety stop (%s); %d tool call(s) dropped", reason, len(suppressed))
        if not suppressed:
            return None
        note = (
            f"[The model provider stopped this response for safety reasons ({reason}). "
            "Its tool calls were not run. Please rephrase the request.]"
        )
        stripped = strip_tool_calls(message, note)
        stripped.additional_kwargs["safety_stop"] = {"reason": reason, "suppressed": suppressed}
        return {"messages": [stripped]}
