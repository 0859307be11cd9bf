"""State prep + request projection: announce newly uploaded files to the model, once.

``before_agent`` lists the thread's uploads folder; files not yet in ``uploaded_files``
are recorded there with the id of the human message of this turn. When the model is
called, that human message carries a short ``<uploaded_files>`` note in the request only
(state and the chat are untouched), so each upload is announced exactly once, in the turn
it arrived, and the note stays stable for prefix caching.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from pronghorn.agent.middlewares._projecting import RequestProjection
from pronghorn.agent.middlewares.thread_data import thread_paths
from pronghorn.agent.state import StateObject, ThreadState
from pronghorn.agent.untyped import as_int
from pronghorn.sandbox.convert import pair_copies
from pronghorn.sandbox.paths import VIRTUAL_UPLOADS, ThreadPaths
from pronghorn.sandbox.uploads import list_uploads

MAX_LISTED = 50


def _list_uploads(paths: ThreadPaths) -> list[StateObject]:
    """Each upload; a document's Markdown copy (``NAME.md``, made at upload time) is
    listed with it, as ``markdown_path``, not as a file of its own."""
    out: list[StateObject] = []
    for name, size, copy in pair_copies(list_uploads(paths)):
        entry: StateObject = {
            "name": name,
            "size": size,
            "virtual_path": f"{VIRTUAL_UPLOADS}/{name}",
        }
        if copy is not None:
            entry["markdown_path"] = f"{VIRTUAL_UPLOADS}/{copy}"
        out.append(entry)
    return out


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _line(f: StateObject) -> str:
    line = f"- {f['virtual_path']} ({_size(as_int(f.get('size')))})"
    if f.get("markdown_path"):
        line += f"; as Markdown: {f['markdown_path']}"
    return line


def upload_note(files: list[StateObject]) -> str:
    lines = [_line(f) for f in files]
    if len(lines) > MAX_LISTED:
        lines = [*lines[:MAX_LISTED], f"- … and {len(lines) - MAX_LISTED} more"]
    hint = (
        " (for a document with a Markdown copy, read the copy: it holds the document's "
        "text, tables and slides)"
        if any(f.get("markdown_path") for f in files)
        else ""
    )
    return (
        "<uploaded_files>\nThe user uploaded these files; read them with read_file when "
        f"relevant{hint}:\n" + "\n".join(lines) + "\n</uploaded_files>"
    )


def _annotate(message: HumanMessage, note: str) -> HumanMessage:
    content = message.content
    if isinstance(content, str):
        new: object = f"{content}\n\n{note}" if content else note
    else:
        new = [*content, {"type": "text", "text": note}]
    return message.model_copy(update={"content": new})


class UploadsMiddleware(RequestProjection):
    state_schema = ThreadState

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)

    async def abefore_agent(self, state: ThreadState, runtime: Runtime) -> dict[str, object] | None:
        paths = thread_paths(self.data_dir)
        if paths is None:
            return None
        present = await asyncio.to_thread(_list_uploads, paths)
        known = {f.get("virtual_path") for f in state.get("uploaded_files") or []}
        new = [f for f in present if f["virtual_path"] not in known]
        if not new:
            return None
        human = next(
            (m for m in reversed(state.get("messages") or []) if isinstance(m, HumanMessage)),
            None,
        )
        anchor = human.id if human is not None else None
        return {"uploaded_files": [{**f, "message_id": anchor} for f in new]}

    def _project(self, request: ModelRequest) -> ModelRequest:
        by_message: dict[str, list[StateObject]] = {}
        files: list[StateObject] = request.state.get("uploaded_files") or []
        for f in files:
            anchor = f.get("message_id")
            if anchor and isinstance(anchor, str):
                by_message.setdefault(anchor, []).append(f)
        if not by_message:
            return request
        messages = [
            _annotate(m, upload_note(by_message[m.id]))
            if isinstance(m, HumanMessage) and m.id in by_message
            else m
            for m in request.messages
        ]
        return request.override(messages=messages)
