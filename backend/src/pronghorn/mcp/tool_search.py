"""`tool_search`: find deferred MCP tools and promote them for the rest of the thread.

With more MCP tools than `mcp.tool_search_threshold`, the model sees only this tool (and
the tools it already promoted): it searches by keywords, or picks exact names with
``select:a,b``; the matches' names go to the thread's ``mcp_promoted`` state and their
schemas are offered from the next model call on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.types import Command
from pydantic import BaseModel, Field

TOOL_SEARCH = "tool_search"
MAX_RESULTS = 5
_WORD = re.compile(r"[a-z0-9]+")


def merge_promoted(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Ordered union (parallel searches in one step both count)."""
    out = list(left or [])
    out.extend(n for n in (right or []) if n not in out)
    return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def rank(tools: Sequence[BaseTool], query: str, limit: int = MAX_RESULTS) -> list[BaseTool]:
    """``select:a,b`` picks by exact name; else tools ranked by shared words (name words
    count double), ties in catalog order."""
    query = query.strip()
    if query.lower().startswith("select:"):
        wanted = [w.strip() for w in query[len("select:") :].split(",") if w.strip()]
        by_name = {t.name: t for t in tools}
        return [by_name[w] for w in wanted if w in by_name][: max(limit, len(wanted))]
    terms = _words(query)
    scored: list[tuple[int, int, BaseTool]] = []
    for index, tool in enumerate(tools):
        name_words = _words(tool.name.replace("_", " "))
        score = 2 * len(terms & name_words) + len(terms & _words(tool.description or ""))
        if score:
            scored.append((-score, index, tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [tool for _, _, tool in scored[:limit]]


def _summary(tool: BaseTool) -> str:
    params = sorted((tool.args or {}).keys())
    first = (tool.description or "").strip().splitlines()
    desc = first[0] if first else ""
    return f"- {tool.name}({', '.join(params)}): {desc}"


class _Args(BaseModel):
    query: str = Field(
        description="Keywords for what you need, or 'select:name1,name2' for exact names."
    )


def make_tool_search(catalog: Callable[[], Sequence[BaseTool]]) -> BaseTool:
    """The tool, over `catalog()` (the tools the agent may see, read at call time)."""

    # Any: LangChain's Command is generic over the graph's node names.
    def search(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        found = rank(catalog(), query)
        if found:
            text = "Found these tools; they are available to call now:\n" + "\n".join(
                _summary(t) for t in found
            )
        else:
            text = "No tool matches; try other keywords."
        return Command(
            update={
                "mcp_promoted": [t.name for t in found],
                "messages": [
                    ToolMessage(content=text, tool_call_id=tool_call_id, name=TOOL_SEARCH)
                ],
            }
        )

    return StructuredTool.from_function(
        func=search,
        name=TOOL_SEARCH,
        description=(
            "Search the deferred MCP tools by keywords (or 'select:a,b' for exact names). "
            "The tools found become callable from your next step on."
        ),
        args_schema=_Args,
    )
