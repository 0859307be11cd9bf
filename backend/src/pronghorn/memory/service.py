"""`MemoryService`: the app's memory component (one per AppRuntime, started in the lifespan).

It owns the update queue: after a run, the conversation's new user and final assistant
messages are queued (``enqueue``: synchronous, never raises, never blocks a run). Entries
are keyed by (user, agent, thread): a thread's later runs coalesce into one pending entry,
which is processed ``debounce_s`` after its last change by one model call. The queue is
bounded (``queue_max_depth``: past it the oldest entry is dropped and counted). ``stop``
drains what is queued (no more debounce) within ``shutdown_flush_timeout_s``. Up to
``max_concurrent_updates`` updates run at once, never two of the same user and agent.

It is also the one door to the stored memory for the API, the middlewares and the tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.constants import TAG_NOSTREAM

from pronghorn.config.schema.memory import MemoryConfig
from pronghorn.memory import edits
from pronghorn.memory.context import memory_context, search
from pronghorn.memory.errors import InvalidMemory
from pronghorn.memory.parse import parse_json_object
from pronghorn.memory.records import (
    Category,
    Fact,
    MemoryDocument,
    MemoryScope,
    new_fact_id,
    now_iso,
)
from pronghorn.memory.store import MemoryRepository
from pronghorn.memory.updater import Turn, UpdateOutcome, UpdateRefused, apply_update, update_prompt

log = logging.getLogger("pronghorn.memory")

INTERNAL_TAGS = [TAG_NOSTREAM, "pronghorn:internal", "pronghorn:memory"]
ModelFor = Callable[[str | None], BaseChatModel | None]
"""The update model for a model name (None: the run's); None back: updates are skipped."""


@dataclass
class _Pending:
    scope: MemoryScope
    thread_id: str | None
    model_name: str | None
    turns: list[Turn] = field(default_factory=list[Turn])
    due: float = 0.0


@dataclass
class _Outcome:
    """One user's last update and last error (what their status shows)."""

    last_update_at: str | None = None
    last_error: str | None = None
    last_error_at: str | None = None


MAX_TRACKED_USERS = 10_000


@dataclass(frozen=True, slots=True)
class MemoryStatus:
    """The queue as one user sees it: the whole queue's depth, their own queued updates,
    and their own last update and last error (counters are the whole service's)."""

    enabled: bool
    mode: str
    queue_depth: int
    queued_for_user: int
    in_flight: int
    processed: int
    dropped: int
    refused: int
    skipped: int
    last_update_at: str | None
    last_error: str | None
    last_error_at: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "enabled": self.enabled,
            "mode": self.mode,
            "queue_depth": self.queue_depth,
            "queued_for_user": self.queued_for_user,
            "in_flight": self.in_flight,
            "processed": self.processed,
            "dropped": self.dropped,
            "refused": self.refused,
            "skipped": self.skipped,
            "last_update_at": self.last_update_at,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
        }


class MemoryService:
    def __init__(
        self,
        repo: MemoryRepository,
        *,
        settings: Callable[[], MemoryConfig],
        model_for: ModelFor,
    ) -> None:
        self.repo = repo
        self._settings = settings
        self._model_for = model_for
        self._queue: OrderedDict[tuple[MemoryScope, str | None], _Pending] = OrderedDict()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None
        self._draining = False
        self._running: set[asyncio.Task[None]] = set()
        self._busy: set[MemoryScope] = set()  # scopes being updated (one update each)
        self.processed = 0
        self.dropped = 0
        self.refused = 0
        self.skipped = 0
        self._clears: dict[MemoryScope, int] = {}  # clears per scope (stale updates)
        self._outcomes: OrderedDict[str, _Outcome] = OrderedDict()

    @property
    def config(self) -> MemoryConfig:
        return self._settings()

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="memory-updates")

    async def stop(self, timeout_s: float | None = None) -> None:
        """Process everything queued (without the debounce), then stop the worker."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        self._draining = True
        self._wake.set()
        wait = self.config.shutdown_flush_timeout_s if timeout_s is None else timeout_s
        try:
            await asyncio.wait_for(asyncio.shield(worker), timeout=wait)
        except TimeoutError:
            log.warning("memory: %d queued update(s) lost at shutdown", len(self._queue))
        finally:
            worker.cancel()
            running = list(self._running)
            for task in running:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
            await asyncio.gather(*running, return_exceptions=True)

    async def wait_idle(self) -> None:
        """Until nothing is queued or in flight (tests; `flush` for callers)."""
        await self._idle.wait()

    async def flush(self) -> None:
        """Process what is queued now, without waiting for the debounce."""
        now = time.monotonic()
        for pending in self._queue.values():
            pending.due = now
        self._wake.set()
        await self.wait_idle()

    # -- the queue ---------------------------------------------------------------------

    def enqueue(
        self,
        scope: MemoryScope,
        turns: Sequence[Turn],
        *,
        thread_id: str | None,
        model_name: str | None,
    ) -> bool:
        """Queue new messages of a conversation for an update (False: nothing queued)."""
        cfg = self.config
        turns = [t for t in turns if t.text.strip()]
        if not cfg.enabled or not turns or self._worker is None:
            return False
        key = (scope, thread_id)
        pending = self._queue.pop(key, None)
        if pending is None:
            while len(self._queue) >= cfg.queue_max_depth:
                _, old = self._queue.popitem(last=False)
                self.dropped += 1
                log.warning("memory: queue full, dropped the update of thread %s", old.thread_id)
            pending = _Pending(scope=scope, thread_id=thread_id, model_name=model_name)
        seen = {t.id for t in pending.turns if t.id is not None}
        pending.turns.extend(t for t in turns if t.id is None or t.id not in seen)
        pending.model_name = model_name or pending.model_name
        pending.due = time.monotonic() + cfg.debounce_s
        self._queue[key] = pending
        self._idle.clear()
        self._wake.set()
        return True

    def _next(self) -> tuple[_Pending | None, float | None]:
        """The entry to process now (a free slot, its scope not being updated already),
        else how long until the next one is due (None: until something changes)."""
        if len(self._running) >= self.config.max_concurrent_updates:
            return None, None
        ready = [(k, p) for k, p in self._queue.items() if p.scope not in self._busy]
        if not ready:
            return None, None
        key, pending = min(ready, key=lambda kv: kv[1].due)
        now = time.monotonic()
        if self._draining or pending.due <= now:
            del self._queue[key]
            return pending, None
        return None, pending.due - now

    async def _work(self) -> None:
        while True:
            self._wake.clear()  # before looking: a change after this wakes the wait below
            pending, delay = self._next()
            if pending is not None:
                self._begin(pending)
                continue
            if not self._queue and not self._running:
                self._idle.set()
                if self._draining:
                    return
            if delay is None:
                await self._wake.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)

    def _begin(self, pending: _Pending) -> None:
        self._busy.add(pending.scope)
        task = asyncio.create_task(self._update(pending), name="memory-update")
        self._running.add(task)

    async def _update(self, pending: _Pending) -> None:
        try:
            await self._process(pending)
        except Exception as exc:  # an update must never take the service down
            self._error(pending.scope, f"{type(exc).__name__}: {exc}")
        finally:
            self._busy.discard(pending.scope)
            current = asyncio.current_task()
            if current is not None:
                self._running.discard(cast("asyncio.Task[None]", current))
            self._wake.set()

    def _outcome(self, scope: MemoryScope) -> _Outcome:
        found = self._outcomes.pop(scope.user_id, None) or _Outcome()
        self._outcomes[scope.user_id] = found
        while len(self._outcomes) > MAX_TRACKED_USERS:
            self._outcomes.popitem(last=False)
        return found

    def _error(self, scope: MemoryScope, message: str) -> None:
        log.warning("memory update failed: %s", message)
        outcome = self._outcome(scope)
        outcome.last_error = message
        outcome.last_error_at = now_iso()

    async def _process(self, pending: _Pending) -> None:
        cfg = self.config
        if not cfg.enabled:
            return
        cleared = self._clears.get(pending.scope, 0)
        doc = await self.repo.load(pending.scope)
        prompt = update_prompt(doc, pending.turns, cfg)
        model = self._model_for(cfg.model or pending.model_name)
        if model is None:
            self.skipped += 1
            return
        reply = await asyncio.wait_for(
            model.ainvoke(
                [HumanMessage(content=prompt)],
                config={"tags": INTERNAL_TAGS, "metadata": {"lc_source": "memory"}},
            ),
            timeout=cfg.model_timeout_s,
        )
        answer = parse_json_object(reply.text)
        if answer is None:
            self._error(pending.scope, "the memory model's answer was not a JSON object")
            return
        outcome: list[UpdateOutcome] = []

        def edit(current: MemoryDocument) -> MemoryDocument | None:
            if self._clears.get(pending.scope, 0) != cleared:
                return None  # the user cleared this memory meanwhile: the update is stale
            result = apply_update(current, answer, cfg, thread_id=pending.thread_id)
            outcome.append(result)
            return result.document

        try:
            await self.repo.change(pending.scope, edit)
        except UpdateRefused as exc:
            self.refused += 1
            self._error(pending.scope, str(exc))
            return
        if not outcome:
            return
        self.processed += 1
        self._outcome(pending.scope).last_update_at = now_iso()
        done = outcome[-1]
        log.info(
            "memory updated",
            extra={
                "thread_id": pending.thread_id,
                "added": done.added,
                "updated": done.updated,
                "retired": done.retired,
            },
        )

    def status(self, user_id: str) -> MemoryStatus:
        cfg = self.config
        outcome = self._outcomes.get(user_id) or _Outcome()
        return MemoryStatus(
            enabled=cfg.enabled,
            mode=cfg.mode,
            queue_depth=len(self._queue),
            queued_for_user=sum(1 for scope, _ in self._queue if scope.user_id == user_id),
            in_flight=len(self._running),
            processed=self.processed,
            dropped=self.dropped,
            refused=self.refused,
            skipped=self.skipped,
            last_update_at=outcome.last_update_at,
            last_error=outcome.last_error,
            last_error_at=outcome.last_error_at,
        )

    # -- reading and editing -----------------------------------------------------------

    async def document(self, scope: MemoryScope) -> MemoryDocument:
        return await self.repo.load(scope)

    async def context(self, scope: MemoryScope, query: str | None, max_tokens: int) -> str:
        return memory_context(await self.repo.load(scope), max_tokens, query)

    async def search(self, scope: MemoryScope, query: str, limit: int = 10) -> list[Fact]:
        return search(await self.repo.load(scope), query, limit)

    async def add_fact(
        self,
        scope: MemoryScope,
        content: str,
        *,
        category: Category = "context",
        confidence: float = 0.9,
        source_thread_id: str | None = None,
    ) -> Fact:
        cfg = self.config
        fact = Fact(
            id=new_fact_id(),
            content=edits.clean_content(content, cfg.max_fact_chars),
            category=category,
            confidence=confidence,
            source_thread_id=source_thread_id,
        )
        await self.repo.change(scope, lambda doc: edits.add_fact(doc, fact, cfg.max_facts))
        return fact

    async def edit_fact(
        self,
        scope: MemoryScope,
        fact_id: str,
        *,
        content: str | None = None,
        category: Category | None = None,
        confidence: float | None = None,
    ) -> Fact:
        cfg = self.config
        text = edits.clean_content(content, cfg.max_fact_chars) if content is not None else None
        result: list[Fact] = []

        def edit(doc: MemoryDocument) -> MemoryDocument:
            new_doc, fact = edits.edit_fact(
                doc, fact_id, content=text, category=category, confidence=confidence
            )
            result.append(fact)
            return new_doc

        await self.repo.change(scope, edit)
        return result[-1]

    async def delete_fact(self, scope: MemoryScope, fact_id: str) -> None:
        await self.repo.change(scope, lambda doc: edits.remove_fact(doc, fact_id))

    async def clear(self, scope: MemoryScope) -> None:
        """Forget the scope's memory and its queued updates; one in flight is dropped."""
        self._clears[scope] = self._clears.get(scope, 0) + 1
        self._queue = OrderedDict((k, v) for k, v in self._queue.items() if k[0] != scope)
        self._wake.set()
        await self.repo.clear(scope)

    async def forget_user(self, user_id: str) -> int:
        """Forget every scope of the user's memory (a deleted user); how many documents."""
        queued = {key[0] for key in self._queue if key[0].user_id == user_id}
        stored = await self.repo.scopes_of(user_id)
        for scope in {*queued, *stored}:
            await self.clear(scope)
        return len(stored)

    async def import_document(self, scope: MemoryScope, data: dict[str, object]) -> MemoryDocument:
        cfg = self.config
        version = data.get("version", 1)
        if version != 1:
            raise InvalidMemory(f"Unsupported memory export version {version!r}")
        return await self.repo.change(
            scope,
            lambda doc: edits.imported(
                doc,
                data,
                max_facts=cfg.max_facts,
                max_fact_chars=cfg.max_fact_chars,
                max_summary_chars=cfg.max_summary_chars,
            ),
        )
