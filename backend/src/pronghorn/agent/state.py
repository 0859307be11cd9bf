"""``ThreadState``: the lead agent's graph state, each key with its reducer.

Keys the web UI reads: ``messages``, ``title``, ``artifacts`` (virtual paths), ``todos``
(``[{content, status}]``) and ``uploaded_files``. The others are harness bookkeeping.
"""

from __future__ import annotations

from typing import Annotated, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware.types import InputAgentState, OutputAgentState
from langgraph.graph.state import (  # pyright: ignore[reportMissingTypeStubs]
    CompiledStateGraph,
)

# One of the state's JSON objects (a todo, an upload, an image, thread data...): checkpointed
# and read back as plain JSON, written by tools, the UI's state edits and older checkpoints,
# so its values are unchecked; a reader checks each field it uses.
StateObject = dict[str, object]


def merge_artifacts(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Ordered, de-duplicated union (``present_files`` appends)."""
    out: list[str] = []
    seen: set[str] = set()
    for path in [*(left or []), *(right or [])]:
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out


def replace_todos(
    left: list[StateObject] | None, right: list[StateObject] | None
) -> list[StateObject]:
    """``write_todos`` replaces the whole list; ``None`` keeps the current one."""
    if right is None:
        return list(left or [])
    return list(right)


def _merge_by(
    key: str, left: list[StateObject] | None, right: list[StateObject] | None
) -> list[StateObject]:
    if right is not None and len(right) == 0:
        return []  # an explicit empty list clears
    merged: dict[object, StateObject] = {}
    for item in [*(left or []), *(right or [])]:
        ident = item.get(key)
        if ident in merged:
            merged[ident] = {**merged[ident], **item}
        else:
            merged[ident] = dict(item)
    return list(merged.values())


def merge_uploaded_files(
    left: list[StateObject] | None, right: list[StateObject] | None
) -> list[StateObject]:
    """Union by ``virtual_path`` (later entries update earlier ones); ``[]`` clears."""
    return _merge_by("virtual_path", left, right)


def merge_viewed_images(
    left: list[StateObject] | None, right: list[StateObject] | None
) -> list[StateObject]:
    """``view_image`` appends; the same ``path`` is kept once (latest wins); ``[]`` clears."""
    return _merge_by("path", left, right)


def merge_dict(left: StateObject | None, right: StateObject | None) -> StateObject:
    """Shallow merge; ``None`` keeps the current value."""
    if right is None:
        return dict(left or {})
    return {**(left or {}), **right}


class ThreadState(AgentState[object]):
    """State of a lead-agent thread (``messages`` with ``add_messages`` is inherited)."""

    title: NotRequired[str | None]
    artifacts: NotRequired[Annotated[list[str], merge_artifacts]]
    todos: NotRequired[Annotated[list[StateObject], replace_todos]]
    uploaded_files: NotRequired[Annotated[list[StateObject], merge_uploaded_files]]
    thread_data: NotRequired[Annotated[StateObject, merge_dict]]
    sandbox: NotRequired[Annotated[StateObject, merge_dict]]
    viewed_images: NotRequired[Annotated[list[StateObject], merge_viewed_images]]
    summary: NotRequired[StateObject | None]


# What ``create_agent`` compiles over ``ThreadState`` (the lead agent, a sub-agent): no
# structured response, no context schema.
AgentGraph = CompiledStateGraph[AgentState[object], None, InputAgentState, OutputAgentState[object]]
