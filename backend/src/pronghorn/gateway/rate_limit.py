"""Per-user request rate limits on the authenticated API (`rate_limits.*`).

Runs after authentication (it keys buckets by the principal), before any route: a user
over the rate gets 429 with `Retry-After` and the request does nothing. Public paths
(probes, login, static files) are not limited here; failed logins have their own limits
(auth/ratelimit.py). The rate is read from the live config on each request; the buckets
are the AppRuntime's (runtime/wiring/rate_buckets.py: memory, or Redis shared by every replica).
"""

from __future__ import annotations

import logging
import math

from starlette.types import ASGIApp, Receive, Scope, Send

from pronghorn.auth.principal import Principal
from pronghorn.auth.request_rate import RateBuckets
from pronghorn.gateway.responses import JSONResponse

log = logging.getLogger("pronghorn.http")


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal: Principal | None = scope.get("state", {}).get("principal")
        runtime = getattr(scope["app"].state, "runtime", None)
        if principal is None or runtime is None:
            await self.app(scope, receive, send)
            return
        cfg = runtime.config.rate_limits
        if cfg.requests_per_second is None:
            await self.app(scope, receive, send)
            return
        buckets: RateBuckets = runtime.rate_buckets
        try:
            wait = await buckets.take(
                principal.identity, rate=cfg.requests_per_second, burst=cfg.burst
            )
        except Exception as exc:  # the shared store is down: serve rather than fail
            log.warning("rate limit store unavailable, request let through: %s", exc)
            wait = None
        if wait is None:
            await self.app(scope, receive, send)
            return
        runtime.metrics.rate_limited.inc()
        response = JSONResponse(
            {"detail": "Too many requests; slow down and retry after the given delay"},
            status_code=429,
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )
        await response(scope, receive, send)
