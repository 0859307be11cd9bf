"""Tool post-processing: keep big tool results out of the context window.

A text result longer than ``soft_chars`` is saved in full to
``/mnt/user-data/outputs/.tool-results/<tool_call_id>.txt`` and replaced with its head, a
pointer to that file and its tail. When the file cannot be written, the result is cut to
head + tail within ``hard_chars``. ``read_file`` results are never externalised (reading
the saved file back would loop) but still respect the hard cap.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from pronghorn.agent.middlewares.thread_data import thread_paths
from pronghorn.agent.tool_types import ToolResult, request_runtime
from pronghorn.agent.untyped import as_dict, as_list
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.files import write_file
from pronghorn.sandbox.paths import VIRTUAL_OUTPUTS

RESULTS_DIR = ".tool-results"
EXEMPT = frozenset({"read_file"})
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _snap_head(text: str, n: int) -> str:
    head = text[:n]
    cut = head.rfind("\n")
    return head[: cut + 1] if cut > n // 2 else head


def _snap_tail(text: str, n: int) -> str:
    tail = text[-n:] if n > 0 else ""
    cut = tail.find("\n")
    return tail[cut + 1 :] if 0 <= cut < n // 2 else tail


def truncate(text: str, limit: int, note: str) -> str:
    """Head + note + tail, at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    room = limit - len(note) - 4
    if room <= 0:
        return text[:limit]
    head = _snap_head(text, room * 2 // 3)
    tail = _snap_tail(text, room - len(head))
    omitted = len(text) - len(head) - len(tail)
    out = f"{head}\n\n{note.format(omitted=omitted)}\n\n{tail}"
    return out[:limit]


class ToolOutputBudgetMiddleware(AgentMiddleware):
    def __init__(
        self,
        data_dir: Path,
        *,
        soft_chars: int = 12000,
        hard_chars: int = 30000,
        head_chars: int = 2000,
        tail_chars: int = 1000,
        exempt: frozenset[str] = EXEMPT,
    ) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)
        self.soft_chars = soft_chars
        self.hard_chars = max(hard_chars, soft_chars)
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self.exempt = exempt

    def _save(self, config: object, call_id: str, text: str) -> str | None:
        paths = thread_paths(self.data_dir, config)
        if paths is None:
            return None
        name = _UNSAFE.sub("_", call_id or "result")[:120] or "result"
        virtual = f"{VIRTUAL_OUTPUTS}/{RESULTS_DIR}/{name}.txt"
        try:  # opened once from the thread root: a folder swapped for a link cannot redirect it
            write_file(paths, virtual, text, append=False)
        except (SandboxError, OSError):
            return None
        return virtual

    def budget(self, message: ToolMessage, config: object) -> ToolMessage:
        """The message with its content within budget (blocking: file write)."""
        text = message.content
        if not isinstance(text, str) or len(text) <= self.soft_chars:
            return message
        name = message.name or ""
        if name in self.exempt:
            if len(text) <= self.hard_chars:
                return message
            note = (
                "[... {omitted} chars omitted. Read a narrower range with start_line and end_line.]"
            )
            return message.model_copy(update={"content": truncate(text, self.hard_chars, note)})
        saved = self._save(config, message.tool_call_id, text)
        if saved is None:
            note = "[... {omitted} chars omitted from this output. Narrow the command or query.]"
            return message.model_copy(update={"content": truncate(text, self.hard_chars, note)})
        head = _snap_head(text, self.head_chars)
        tail = _snap_tail(text, self.tail_chars)
        omitted = len(text) - len(head) - len(tail)
        pointer = (
            f"[Output too long: the full {name or 'tool'} output ({len(text)} chars, "
            f"~{len(text) // 4} tokens) was saved to {saved}. {omitted} chars are omitted "
            "here; use read_file with start_line and end_line to read the parts you need.]"
        )
        content = f"{head}\n\n{pointer}\n\n{tail}"
        extra = {**message.additional_kwargs, "full_output_path": saved}
        return message.model_copy(update={"content": content, "additional_kwargs": extra})

    def _needs(self, result: ToolResult) -> bool:
        for m in self._messages(result):
            if isinstance(m.content, str) and len(m.content) > self.soft_chars:
                return True
        return False

    @staticmethod
    def _messages(result: ToolResult) -> list[ToolMessage]:
        if isinstance(result, ToolMessage):
            return [result]
        update = as_dict(result.update)
        if update is not None:
            return [m for m in as_list(update.get("messages")) or [] if isinstance(m, ToolMessage)]
        return []

    def apply(self, result: ToolResult, config: object) -> ToolResult:
        if isinstance(result, ToolMessage):
            return self.budget(result, config)
        update = as_dict(result.update)
        if update is not None:
            msgs = [
                self.budget(m, config) if isinstance(m, ToolMessage) else m
                for m in as_list(update.get("messages")) or []
            ]
            return dataclasses.replace(result, update={**update, "messages": msgs})
        return result

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        result = handler(request)
        if not self._needs(result):
            return result
        return self.apply(result, getattr(request_runtime(request), "config", None))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        result = await handler(request)
        if not self._needs(result):
            return result
        config = getattr(request_runtime(request), "config", None)
        return await asyncio.to_thread(self.apply, result, config)
