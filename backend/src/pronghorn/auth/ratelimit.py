"""In-memory limits on failed logins and failed API-key authentications.

A sliding window of failure times per client IP and per account: once `limit` failures
fall in the last `window_s` seconds, further attempts are refused (429, `Retry-After` =
until the oldest of them leaves the window) — even with the right password, so guessing
gains nothing. A successful login clears its account's failures. The clock is injectable
so tests need no sleeps. Per process: behind N replicas the effective limit is N times
higher, which is still a hard bound on guessing.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from pronghorn.auth.authenticator import AuthError

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


class AuthLimits:
    """The per-client-IP and per-account limits, checked together."""

    def __init__(
        self, *, per_ip: int, per_account: int, window_s: float, clock: Clock = time.monotonic
    ) -> None:
        self.by_ip = FailureLimiter(limit=per_ip, window_s=window_s, clock=clock)
        self.by_account = FailureLimiter(limit=per_account, window_s=window_s, clock=clock)

    def check(self, client_ip: str | None, account: str | None = None) -> None:
        """Raise a 429 `AuthError` when the client or the account is over its limit."""
        waits = []
        if client_ip is not None:
            waits.append(self.by_ip.retry_after(client_ip))
        if account is not None:
            waits.append(self.by_account.retry_after(account))
        wait = max((w for w in waits if w is not None), default=None)
        if wait is not None:
            raise AuthError(
                "Too many failed attempts; try again later", status=429, retry_after_s=wait
            )

    def failed(self, client_ip: str | None, account: str | None = None) -> None:
        if client_ip is not None:
            self.by_ip.failed(client_ip)
        if account is not None:
            self.by_account.failed(account)

    def succeeded(self, account: str) -> None:
        self.by_account.reset(account)
