"""The lead agent's tools.

:func:`build_tools` returns every tool the run may use. ``write_todos`` is always offered
(plan mode changes the prompt, not the tool set, so a model can keep a list whenever a job
has several steps); ``view_image`` always (a model without vision is told it cannot view
images); ``web_search`` only when a search provider is configured; ``web_fetch`` always.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool

from pronghorn.agent.tools.clarify import clarify_tools
from pronghorn.agent.tools.deps import ToolDeps
from pronghorn.agent.tools.files import file_tools
from pronghorn.agent.tools.image import image_tools
from pronghorn.agent.tools.present import present_tools
from pronghorn.agent.tools.shell import shell_tools
from pronghorn.agent.tools.todos import todo_tools
from pronghorn.agent.tools.web import fetch_tools, search_tools

if TYPE_CHECKING:
    from pronghorn.agent.options import AgentOptions

__all__ = ["ToolDeps", "build_tools"]


def build_tools(deps: ToolDeps, *, options: AgentOptions | None = None) -> list[BaseTool]:
    """All tools for one (config snapshot, options). Cheap; call once per compiled graph."""
    tools: list[BaseTool] = [
        *file_tools(deps),
        *shell_tools(deps),
        *present_tools(deps),
        *clarify_tools(deps),
        *todo_tools(deps),
        *fetch_tools(deps),
        *image_tools(deps),
    ]
    if deps.search is not None:
        tools += search_tools(deps.search)
    for t in tools:  # docstrings wrap lines; models get one clean paragraph
        t.description = " ".join(t.description.split())
    return tools
