"""Memory tools (``memory.mode: tool``): the agent searches and edits the user's long-term
memory itself, instead of the passive update after each run."""

from __future__ import annotations

from typing import Annotated

from langchain.tools import tool
from langchain_core.tools import BaseTool
from pydantic import Field

from pronghorn.agent.tool_types import AgentToolRuntime
from pronghorn.agent.tools._common import ToolError, failure
from pronghorn.memory.errors import MemoryDomainError
from pronghorn.memory.records import CATEGORIES, MemoryScope, as_category, as_confidence
from pronghorn.memory.service import MemoryService
from pronghorn.memory.turns import scope_of

CategoryArg = Annotated[
    str,
    Field(
        description=f"One of: {', '.join(CATEGORIES)}.",
        json_schema_extra={"enum": list(CATEGORIES)},
    ),
]


def _scope(runtime: AgentToolRuntime, agent_name: str | None) -> MemoryScope:
    scope = scope_of(runtime.config, agent_name)
    if scope is None:
        raise ToolError("Memory needs a signed-in user; this run has none.")
    return scope


def memory_tools(service: MemoryService, *, agent_name: str | None = None) -> list[BaseTool]:
    @tool("memory_search", parse_docstring=True)
    async def memory_search(query: str, runtime: AgentToolRuntime, limit: int = 10) -> object:
        """Search what you remember about the user from earlier conversations.

        Args:
            query: Words to look for (empty: the most important facts).
            limit: How many facts to return at most (1-50).
        """
        try:
            facts = await service.search(_scope(runtime, agent_name), query, max(1, min(50, limit)))
        except (ToolError, MemoryDomainError) as exc:
            return failure(runtime, "memory_search", str(exc))
        if not facts:
            return "No remembered facts match."
        return "\n".join(f"{f.id} [{f.category}] {f.content}" for f in facts)

    @tool("memory_add", parse_docstring=True)
    async def memory_add(
        content: str, category: CategoryArg, runtime: AgentToolRuntime, confidence: float = 0.9
    ) -> object:
        """Remember a durable fact about the user for later conversations.

        Args:
            content: The fact, one short sentence.
            category: What kind of fact it is.
            confidence: How sure you are, 0 to 1.
        """
        try:
            scope = _scope(runtime, agent_name)
            thread = (runtime.config.get("configurable") or {}).get("thread_id")
            fact = await service.add_fact(
                scope,
                content,
                category=as_category(category),
                confidence=as_confidence(confidence),
                source_thread_id=str(thread) if thread else None,
            )
        except (ToolError, MemoryDomainError) as exc:
            return failure(runtime, "memory_add", str(exc))
        return f"Remembered as {fact.id}."

    @tool("memory_update", parse_docstring=True)
    async def memory_update(
        fact_id: str,
        runtime: AgentToolRuntime,
        content: str | None = None,
        category: str | None = None,
    ) -> object:
        """Correct a remembered fact (for example when the user contradicts it).

        Args:
            fact_id: The fact's id, as memory_search shows it.
            content: The corrected fact.
            category: A new category, if it changes.
        """
        try:
            fact = await service.edit_fact(
                _scope(runtime, agent_name),
                fact_id,
                content=content,
                category=as_category(category) if category else None,
            )
        except (ToolError, MemoryDomainError) as exc:
            return failure(runtime, "memory_update", str(exc))
        return f"Updated {fact.id}: {fact.content}"

    @tool("memory_delete", parse_docstring=True)
    async def memory_delete(fact_id: str, runtime: AgentToolRuntime) -> object:
        """Forget a remembered fact that is no longer true or that the user wants forgotten.

        Args:
            fact_id: The fact's id, as memory_search shows it.
        """
        try:
            await service.delete_fact(_scope(runtime, agent_name), fact_id)
        except (ToolError, MemoryDomainError) as exc:
            return failure(runtime, "memory_delete", str(exc))
        return f"Forgot {fact_id}."

    tools: list[BaseTool] = [memory_search, memory_add, memory_update, memory_delete]
    for t in tools:
        t.description = " ".join(t.description.split())
    return tools
