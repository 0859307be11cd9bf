"""`GET /metrics`: the Prometheus text exposition, for a scraper with the metrics token or
for an admin (anyone when auth.mode is none). With `metrics.port` set the series are served
there instead (gateway/metrics_listener.py) and this route answers 404."""

from __future__ import annotations

import asyncio
import hmac

from fastapi import APIRouter, Request
from starlette.responses import Response

from pronghorn.gateway.auth_middleware import credentials_of
from pronghorn.gateway.errors import ApiError
from pronghorn.gateway.models.errors import errors
from pronghorn.runtime.observability.metrics import CONTENT_TYPE
from pronghorn.runtime.wiring.app_runtime import AppRuntime

router = APIRouter()


def bearer(request: Request) -> str | None:
    value = request.headers.get("authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def token_matches(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


async def authorize_scrape(request: Request, runtime: AppRuntime) -> None:
    """The metrics token, when configured, is the only credential; otherwise an admin's."""
    token = runtime.config.metrics.token
    if token is not None:
        if not token_matches(bearer(request), token.get_secret_value()):
            raise ApiError(401, "A valid metrics token is required (Authorization: Bearer)")
        return
    # An AuthError (401, 429 …) is answered by its own handler.
    principal = await runtime.authenticator.authenticate(
        credentials_of(request.scope, runtime.auth.proxies)
    )
    if not principal.is_admin:
        raise ApiError(403, "Metrics are for admins (or set metrics.token for a scraper)")


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "description": "The Prometheus text exposition",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        **errors(401, 403, 404, 429),
    },
)
async def metrics(request: Request) -> Response:
    runtime: AppRuntime = request.app.state.runtime
    cfg = runtime.config.metrics
    if not cfg.enabled or cfg.port is not None:
        raise ApiError(404, "Not Found")
    await authorize_scrape(request, runtime)
    # Reads /proc (process metrics) or the workers' files: off the event loop.
    body = await asyncio.to_thread(runtime.metrics.render)
    return Response(body, media_type=CONTENT_TYPE)
