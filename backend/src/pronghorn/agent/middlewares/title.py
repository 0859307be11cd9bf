"""Finalization: give the thread a ``title`` after its first exchange.

After the first model reply of a thread without a title, the title is either asked from a
title model (a ``nostream``-tagged call, so its tokens never reach the chat stream) or,
without one, made locally from the first user message, cut to ``max_chars`` on a word
boundary.
"""

from __future__ import annotations

import logging
import re

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._util import text_of
from pronghorn.agent.state import ThreadState

log = logging.getLogger("pronghorn.agent.title")

INTERNAL_TAGS = [TAG_NOSTREAM, "pronghorn:internal", "pronghorn:title"]
PROMPT = (
    "Write a short title (at most 6 words) for a conversation that starts with the message "
    "below. Answer with the title only, no quotes.\n\n"
)


def local_title(text: str, max_chars: int) -> str:
    flat = " ".join(text.split())
    flat = re.sub(r"<uploaded_files>.*", "", flat).strip()
    if len(flat) <= max_chars:
        return flat or "New conversation"
    cut = flat[: max_chars - 1]
    if " " in cut[max_chars // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,.;:-") + "…"


def clean_title(text: str, max_chars: int) -> str:
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.strip().strip("\"'*#` ").removeprefix("Title:").strip()
    return local_title(line, max_chars) if line else ""


class TitleMiddleware(AgentMiddleware[ThreadState]):
    state_schema = ThreadState

    def __init__(self, *, max_chars: int = 60, model: BaseChatModel | None = None) -> None:
        super().__init__()
        self.max_chars = max_chars
        self.model = model

    async def aafter_model(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        if state.get("title"):
            return None
        messages = state.get("messages") or []
        first = next((m for m in messages if isinstance(m, HumanMessage)), None)
        if first is None or not any(isinstance(m, AIMessage) for m in messages):
            return None
        text = text_of(first)
        title = ""
        if self.model is not None:
            try:
                reply = await self.model.ainvoke(
                    [HumanMessage(content=PROMPT + text[:2000])],
                    config={"tags": INTERNAL_TAGS, "metadata": {"lc_source": "title"}},
                )
                title = clean_title(text_of(reply), self.max_chars)
            except Exception as exc:  # a title is never worth failing a run
                log.info("title model failed: %s", exc)
        return {"title": title or local_title(text, self.max_chars)}
