"""Whose turn it is on each thread in this process: the run (or state update) that holds a
thread, as a future that completes when it lets go. The local queue chains a thread's runs
on it (one at a time, in creation order); a state update holds a turn on both queues, and
the cluster queue claims no run of a thread whose turn is held here."""

from __future__ import annotations

import asyncio


class ThreadTurns:
    def __init__(self) -> None:
        self._tails: dict[str, asyncio.Future[None]] = {}

    def held(self, thread_id: str) -> bool:
        tail = self._tails.get(thread_id)
        return tail is not None and not tail.done()

    def threads(self) -> list[str]:
        """The threads whose turn is held here."""
        return [t for t, tail in self._tails.items() if not tail.done()]

    def take(self, thread_id: str, turn: asyncio.Future[None]) -> asyncio.Future[None] | None:
        """Queue `turn` last on the thread: the turn before it (None: none), which it waits
        for."""
        prev = self._tails.get(thread_id)
        self._tails[thread_id] = turn
        return prev

    def end(self, thread_id: str, turn: asyncio.Future[None]) -> None:
        """`turn` is over: the next one on the thread may go."""
        if not turn.done():
            turn.set_result(None)
        if self._tails.get(thread_id) is turn:
            del self._tails[thread_id]
