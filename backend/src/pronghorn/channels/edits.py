"""Editing one message under platform rate limits (Telegram 429 `retry_after`, Slack 429
`Retry-After`).

`EditPump` streams previews without ever holding up the run's stream: at most one edit is
in flight, each carries the newest text (what arrived meanwhile is coalesced, never
queued), and an edit refused for a rate limit pushes the next one back by the wait the
platform asked for (`limited_until`). `final_edit` delivers the finished text: it first
waits out a rate limit a streaming edit was given, retries a rate-limited edit after the
asked wait (bounded), and when the message still cannot be edited it sends the text as a
new message, so the final answer is never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.transport import Transport
from pronghorn.channels.types import Sent, Target

log = logging.getLogger("pronghorn.channels")

MAX_WAIT_S = 30.0  # the longest a platform's retry-after is honoured at once
FINAL_ATTEMPTS = 3


def bounded(seconds: float | None) -> float:
    return min(max(seconds or 0.0, 0.0), MAX_WAIT_S)


class EditPump:
    def __init__(
        self,
        transport: Transport,
        sent: Sent,
        interval: float,
        shape: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.t = transport
        self.sent = sent
        self.interval = interval
        self.shape = shape  # the text as shown (rendered when sent, not per chunk)
        self.latest: str | None = None
        self.shown: str | None = None
        self.not_before = time.monotonic() + interval
        self.rate_limited = 0  # edits refused for a rate limit
        self.limited_until = 0.0  # monotonic time until which the platform asked for no edit
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._in_flight = False

    def offer(self, text: str) -> None:
        """Show `text` as soon as the throttle (and any rate limit) allows."""
        self.latest = text
        if not self._closed and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run(), name="channel-edit")

    async def _run(self) -> None:
        while not self._closed and self.latest is not None and self.latest != self.shown:
            delay = self.not_before - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
                if self._closed:
                    return
            text = self.latest
            self._in_flight = True
            try:
                await self.t.edit(self.sent, self.shape(text))
            except PlatformError as exc:
                if exc.retry_after is not None:
                    self.rate_limited += 1
                    self.limited_until = time.monotonic() + bounded(exc.retry_after)
                    wait = max(self.interval, bounded(exc.retry_after))
                else:  # not a rate limit: skip this text (the final edit repairs it)
                    self.shown, wait = text, self.interval
                self.not_before = time.monotonic() + wait
                log.debug("streaming edit failed", extra={"error": str(exc)})
                continue
            finally:
                self._in_flight = False
            self.shown = text
            self.not_before = time.monotonic() + self.interval

    async def close(self) -> None:
        """Stop streaming: a wait is cut short; an edit already sent is let finish (bounded),
        so it cannot land after the final edit."""
        self._closed = True
        task, self._task = self._task, None
        if task is None or task.done():
            return
        if self._in_flight:
            await asyncio.wait({task}, timeout=MAX_WAIT_S)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def final_edit(
    t: Transport, sent: Sent, target: Target, text: str, not_before: float = 0.0
) -> None:
    """Edit `sent` to `text` once the monotonic time `not_before` (a rate limit's end) has
    passed; rate-limited: wait as asked and retry; failing still: send `text` as a new
    message."""
    pending = not_before - time.monotonic()
    if pending > 0:
        await asyncio.sleep(min(pending, MAX_WAIT_S))
    for attempt in range(FINAL_ATTEMPTS):
        try:
            await t.edit(sent, text)
            return
        except PlatformError as exc:
            log.warning(
                "final edit failed", extra={"channel": t.name, "error": str(exc), "try": attempt}
            )
            if exc.retry_after is None:
                break
            await asyncio.sleep(bounded(exc.retry_after))
    await t.send(target, text)
