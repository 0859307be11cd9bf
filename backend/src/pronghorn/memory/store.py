"""`MemoryRepository`: a user's memory document kept in the LangGraph store.

One store item per scope, namespace ``("__memory__", <user>, <agent or "__default__">)``,
key ``"document"``: outside every user's store-API space (which lives under ``__user__``),
so memory is reached only through the memory API, the agent's middlewares and tools. Writes
to one scope are serialized (read, change, write under a per-scope lock) and bump the
document's revision.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import cast

from langgraph.store.base import BaseStore

from pronghorn.memory.records import Fact, MemoryDocument, MemoryScope, Summaries, now_iso

ROOT = "__memory__"
DEFAULT_AGENT = "__default__"
KEY = "document"


def _label(value: str) -> str:
    """One namespace label (the stores forbid dots), reversibly escaped."""
    return value.replace("%", "%25").replace(".", "%2E")


def _unlabel(value: str) -> str:
    return value.replace("%2E", ".").replace("%25", "%")


def namespace_of(scope: MemoryScope) -> tuple[str, ...]:
    return (ROOT, _label(scope.user_id), _label(scope.agent_name or DEFAULT_AGENT))


def document_from_value(scope: MemoryScope, value: dict[str, object]) -> MemoryDocument:
    raw_facts = value.get("facts")
    facts: list[Fact] = []
    if isinstance(raw_facts, list):
        for item in cast("list[object]", raw_facts):
            if isinstance(item, dict):
                fact = Fact.from_json(cast("dict[str, object]", item))
                if fact.content.strip():
                    facts.append(fact)
    revision = value.get("revision")
    updated = value.get("updated_at")
    return MemoryDocument(
        scope=scope,
        summaries=Summaries.from_json(value.get("summaries")),
        facts=tuple(facts),
        revision=revision if isinstance(revision, int) else 0,
        updated_at=str(updated) if updated else None,
    )


class MemoryRepository:
    def __init__(self, store: BaseStore) -> None:
        self.store = store
        self._locks: weakref.WeakValueDictionary[tuple[str, ...], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def _lock(self, scope: MemoryScope) -> asyncio.Lock:
        ns = namespace_of(scope)
        lock = self._locks.get(ns)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[ns] = lock
        return lock

    async def load(self, scope: MemoryScope) -> MemoryDocument:
        item = await self.store.aget(namespace_of(scope), KEY)
        if item is None:
            return MemoryDocument(scope=scope)
        return document_from_value(scope, item.value)

    async def _save(self, doc: MemoryDocument) -> None:
        value = doc.to_json()
        await self.store.aput(namespace_of(doc.scope), KEY, value, index=False)

    async def change(
        self, scope: MemoryScope, edit: Callable[[MemoryDocument], MemoryDocument | None]
    ) -> MemoryDocument:
        """Apply ``edit`` to the current document and store the result (``edit`` returns
        None to leave it unchanged; it may raise a domain error, nothing is written)."""
        lock = self._lock(scope)
        async with lock:
            current = await self.load(scope)
            changed = edit(current)
            if changed is None:
                return current
            saved = MemoryDocument(
                scope=scope,
                summaries=changed.summaries,
                facts=changed.facts,
                revision=current.revision + 1,
                updated_at=now_iso(),
            )
            await self._save(saved)
            return saved

    async def clear(self, scope: MemoryScope) -> None:
        async with self._lock(scope):
            await self.store.adelete(namespace_of(scope), KEY)

    async def scopes_of(self, user_id: str) -> list[MemoryScope]:
        """Every scope (default and per agent) the user has a stored document in."""
        found: list[MemoryScope] = []
        offset = 0
        while True:
            page = await self.store.alist_namespaces(
                prefix=(ROOT, _label(user_id)), max_depth=3, limit=100, offset=offset
            )
            for ns in page:
                agent = _unlabel(ns[2]) if len(ns) > 2 else DEFAULT_AGENT
                found.append(MemoryScope(user_id, None if agent == DEFAULT_AGENT else agent))
            if len(page) < 100:
                return found
            offset += len(page)
