"""Limits on failed logins and failed API-key authentications.

A sliding window of failure times per client IP and per account: once `limit` failures
fall in the last `window_s` seconds, further attempts are refused (429, `Retry-After` =
until the oldest of them leaves the window) — even with the right password, so guessing
gains nothing. A successful login clears its account's failures. The clock is injectable
so tests need no sleeps.

Every process counts in memory. With Redis configured (`broker.kind: redis`) the counts are
also shared by every replica (`share()`, auth/ratelimit_redis.py), so N replicas allow what
one does; while Redis is unreachable each process falls back to its own counts, which are
still a hard bound on guessing (N times the limit at most).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from pronghorn.auth.authenticator import AuthError

log = logging.getLogger("pronghorn.auth")

Clock = Callable[[], float]


class FailureLimiter:
    def __init__(
        self,
        *,
        limit: int,
        window_s: float,
        clock: Clock = time.monotonic,
        max_keys: int = 50_000,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str, at: float) -> deque[float] | None:
        times = self._failures.get(key)
        if times is None:
            return None
        while times and times[0] <= at - self.window_s:
            times.popleft()
        if not times:
            del self._failures[key]
            return None
        return times

    def retry_after(self, key: str) -> float | None:
        """Seconds until `key` may try again, or None when it may now."""
        at = self.clock()
        times = self._recent(key, at)
        if times is None or len(times) < self.limit:
            return None
        return max(0.001, times[-self.limit] + self.window_s - at)

    def failed(self, key: str) -> None:
        at = self.clock()
        times = self._recent(key, at)
        if times is None:
            if len(self._failures) >= self.max_keys:
                self._prune(at)
            times = self._failures[key] = deque(maxlen=self.limit)
        times.append(at)

    def reset(self, key: str) -> None:
        self._failures.pop(key, None)

    def _prune(self, at: float) -> None:
        for key in list(self._failures):
            self._recent(key, at)
        while len(self._failures) >= self.max_keys:  # still full: forget the oldest keys
            self._failures.pop(next(iter(self._failures)))


class SharedFailures(Protocol):
    """Failure windows every replica shares (keys are `ip:<ip>` and `account:<name>`)."""

    unreachable: tuple[type[BaseException], ...]
    """What a lost or refused connection to the shared store raises (counted locally)."""

    async def retry_after(self, key: str, *, limit: int, window_s: float) -> float | None: ...

    async def failed(self, key: str, *, limit: int, window_s: float) -> None: ...

    async def reset(self, key: str) -> None: ...


WARN_EVERY_S = 30.0


class AuthLimits:
    """The per-client-IP and per-account limits, checked together."""

    def __init__(
        self, *, per_ip: int, per_account: int, window_s: float, clock: Clock = time.monotonic
    ) -> None:
        self.by_ip = FailureLimiter(limit=per_ip, window_s=window_s, clock=clock)
        self.by_account = FailureLimiter(limit=per_account, window_s=window_s, clock=clock)
        self.shared: SharedFailures | None = None
        self._warned_at: float | None = None

    def share(self, shared: SharedFailures | None) -> None:
        """Count in `shared` too (every replica's failures), or stop (None)."""
        self.shared = shared

    def _keys(self, client_ip: str | None, account: str | None) -> list[tuple[str, FailureLimiter]]:
        keys: list[tuple[str, FailureLimiter]] = []
        if client_ip is not None:
            keys.append((f"ip:{client_ip}", self.by_ip))
        if account is not None:
            keys.append((f"account:{account}", self.by_account))
        return keys

    def _unreachable(self, exc: BaseException) -> None:
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            log.warning("shared login limits unreachable, counting in this process: %s", exc)

    async def check(self, client_ip: str | None, account: str | None = None) -> None:
        """Raise a 429 `AuthError` when the client or the account is over its limit."""
        waits: list[float | None] = []
        keys = self._keys(client_ip, account)
        for key, local in keys:
            waits.append(local.retry_after(key.partition(":")[2]))
        shared = self.shared
        if shared is not None:
            try:
                for key, local in keys:
                    waits.append(
                        await shared.retry_after(key, limit=local.limit, window_s=local.window_s)
                    )
            except shared.unreachable as exc:
                self._unreachable(exc)
        wait = max((w for w in waits if w is not None), default=None)
        if wait is not None:
            raise AuthError(
                "Too many failed attempts; try again later", status=429, retry_after_s=wait
            )

    async def failed(self, client_ip: str | None, account: str | None = None) -> None:
        keys = self._keys(client_ip, account)
        for key, local in keys:
            local.failed(key.partition(":")[2])
        shared = self.shared
        if shared is not None:
            try:
                for key, local in keys:
                    await shared.failed(key, limit=local.limit, window_s=local.window_s)
            except shared.unreachable as exc:
                self._unreachable(exc)

    async def succeeded(self, account: str) -> None:
        self.by_account.reset(account)
        shared = self.shared
        if shared is not None:
            try:
                await shared.reset(f"account:{account}")
            except shared.unreachable as exc:
                self._unreachable(exc)
