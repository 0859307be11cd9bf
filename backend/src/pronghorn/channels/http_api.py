"""A platform Web API called over httpx: JSON in, JSON out, retried with backoff on
network errors, 429 and 5xx. Error messages never carry the URL (it may hold a token)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

import httpx

from pronghorn.channels.errors import PlatformError
from pronghorn.channels.wire import WireDict, WireMap

log = logging.getLogger("pronghorn.channels")


class Backoff:
    """Waits that double from `initial_s` up to `max_s`; `reset` after a success."""

    def __init__(self, initial_s: float, max_s: float) -> None:
        self.initial_s, self.max_s = initial_s, max_s
        self.next_s = initial_s

    def reset(self) -> None:
        self.next_s = self.initial_s

    async def wait(self, at_least: float | None = None) -> None:
        delay = max(self.next_s, at_least or 0.0)
        self.next_s = min(self.next_s * 2, self.max_s)
        await asyncio.sleep(min(delay, self.max_s))


def as_json(response: httpx.Response, what: str) -> WireDict:
    try:
        body: object = response.json()
    except ValueError:
        raise PlatformError(f"{what}: HTTP {response.status_code}, not JSON") from None
    if not isinstance(body, Mapping):
        raise PlatformError(f"{what}: HTTP {response.status_code}, unexpected body")
    return dict(cast(WireMap, body))


async def call(
    client: httpx.AsyncClient,
    what: str,
    url: str,
    *,
    attempts: int,
    backoff: Backoff,
    retry_after: Callable[[httpx.Response], float | None] | None = None,
    method: str = "POST",
    raise_on_limit: bool = False,
    **kwargs: Any,  # httpx request options (json=, data=, files=, params=…), passed through
) -> httpx.Response:
    """POST (or `method`) with retries on transport errors, 429 and 5xx; the last failure
    raises. `raise_on_limit`: a 429 that says how long to wait raises at once, for a caller
    that waits itself (edits: the edit pump coalesces, rather than resending stale text)."""
    for attempt in range(attempts):
        try:
            response = await client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            error = PlatformError(f"{what}: {type(exc).__name__}")
        else:
            if response.status_code != 429 and response.status_code < 500:
                backoff.reset()
                return response
            after = retry_after(response) if retry_after is not None else None
            error = PlatformError(f"{what}: HTTP {response.status_code}", retry_after=after)
            if raise_on_limit and after is not None:
                raise error
        if attempt == attempts - 1:
            raise error
        log.warning("platform call failed, retrying", extra={"call": what, "error": str(error)})
        await backoff.wait(error.retry_after)
    raise AssertionError("unreachable")


async def download_capped(
    client: httpx.AsyncClient,
    url: str,
    name: str,
    max_bytes: int,
    **kwargs: Any,  # httpx request options, passed through
) -> bytes:
    """GET a platform file, streamed and refused once it passes `max_bytes` (never held
    whole first); errors name the file, never the URL."""
    try:
        async with client.stream("GET", url, **kwargs) as response:
            if response.status_code != 200:
                raise PlatformError(f"file download: HTTP {response.status_code}")
            return await read_capped(response, name, max_bytes)
    except httpx.HTTPError as exc:
        raise PlatformError(f"file download: {type(exc).__name__}") from None


async def read_capped(response: httpx.Response, name: str, max_bytes: int) -> bytes:
    """The body of a streamed response, refused once it passes `max_bytes`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise PlatformError(f"{name} is larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
