"""Per-user request rate limits on the authenticated API (`rate_limits.*`).

Runs after authentication (it keys buckets by the principal), before any route: a user
over the rate gets 429 with `Retry-After` and the request does nothing. Public paths
(probes, login, static files) are not limited here; failed logins have their own limits
(auth/ratelimit.py). The rate is read from the live config on each request.
"""

from __future__ import annotations

import math

from starlette.types import ASGIApp, Receive, Scope, Send

from pronghorn.auth.principal import Principal
from pronghorn.auth.request_rate import MemoryRateBuckets, RateBuckets
from pronghorn.gateway.responses import JSONResponse


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, buckets: RateBuckets | None = None) -> None:
        self.app = app
        self.buckets: RateBuckets = buckets or MemoryRateBuckets()

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
        wait = await self.buckets.take(
            principal.identity, rate=cfg.requests_per_second, burst=cfg.burst
        )
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
