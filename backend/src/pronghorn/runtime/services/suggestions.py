"""Follow-up suggestions: one model call that proposes the user's next questions."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage, SystemMessage

from pronghorn.models.errors import UnknownModelError
from pronghorn.runtime.errors import InvalidRun

if TYPE_CHECKING:
    from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.suggestions")

MAX_CONTEXT_CHARS = 6000
MAX_SUGGESTION_CHARS = 200
SYSTEM = (
    "You propose follow-up questions. Reply with exactly {n} short questions the user might "
    "ask next about this conversation, one per line, in the user's language, with no "
    "numbering and nothing else."
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def parse(text: str, n: int) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        item = _BULLET.sub("", line).strip().strip('"').strip()
        if item and item not in out:
            out.append(item[:MAX_SUGGESTION_CHARS])
    return out[:n]


def transcript(messages: Sequence[tuple[str, str]]) -> str:
    lines = [f"{role}: {content}" for role, content in messages if content.strip()]
    return "\n".join(lines)[-MAX_CONTEXT_CHARS:]


async def suggest(
    runtime: AppRuntime, messages: Sequence[tuple[str, str]], n: int, model_name: str | None
) -> list[str]:
    """Up to `n` suggestions (empty when disabled, with nothing to go on, or when the model
    fails: suggestions are a nicety, never an error)."""
    cfg = runtime.config.suggestions
    n = min(n, cfg.max_suggestions)
    if not cfg.enabled or n <= 0 or not transcript(messages):
        return []
    try:
        model = runtime.models.create(model_name or cfg.model)
    except UnknownModelError as exc:
        raise InvalidRun(f"Unknown model {exc.name!r}; see GET /api/models") from None
    try:
        reply = await model.ainvoke(
            [
                SystemMessage(SYSTEM.format(n=n)),
                HumanMessage(f"Conversation:\n{transcript(messages)}\n\nFollow-up questions:"),
            ]
        )
    except Exception as exc:
        log.info("suggestions failed: %s", exc)
        return []
    return parse(reply.text, n)
