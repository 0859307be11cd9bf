"""`Idempotency-Key` on creating requests (runs, threads, assistants).

A client that timed out and retries with the same key gets the first request's result: the
same JSON for a create, the original run's stream or output for `/stream` and `/wait`,
never a second run. The key is per user (the principal's identity) and remembered for
`runs.idempotency_ttl_s`; the same key with another request (method, path, query or body)
is a 422 naming the key. The record is a row of `idempotency_keys`, so every replica agrees
(runtime/services/idempotency_keys.py); a request that fails frees its key again.

A second request that arrives while the first is still creating waits for it (up to
WAIT_S), then replays it; a record left pending by a process that died is taken over by a
retry after STALE_S.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import cast

import orjson
from fastapi import Request, Response

from pronghorn.gateway.errors import ApiError
from pronghorn.runtime.access import Access
from pronghorn.runtime.services.idempotency_keys import IdempotencyKeys
from pronghorn.runtime.wiring.app_runtime import AppRuntime

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
WAIT_S = 15.0  # a duplicate waits this long for the first request to finish creating
STALE_S = 60.0  # a pending record this old belongs to a request that died
POLL_S = 0.05

# What a route hands back besides its response: the JSON-able record a replay needs.
Replayer = Callable[[Mapping[str, object]], Awaitable[Response]]
Action = Callable[[], Awaitable[tuple[Response, dict[str, object]]]]


@dataclass(frozen=True, slots=True)
class _Key:
    owner_id: str
    key: str
    fingerprint: str


def json_record(response: Response) -> dict[str, object]:
    """The record of a JSON answer: its body and Content-Location, replayed byte for byte."""
    headers = {
        k: v for k, v in response.headers.items() if k.lower() in ("content-location", "location")
    }
    return {"kind": "json", "body": bytes(response.body).decode(), "headers": headers}


async def replay_json(record: Mapping[str, object]) -> Response:
    stored = record.get("headers")
    # json_record wrote them: header names to values
    headers = cast("dict[str, str]", stored) if isinstance(stored, dict) else {}
    return Response(
        content=str(record["body"]),
        media_type="application/json",
        headers=dict(headers),
    )


def _key_of(request: Request) -> str | None:
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable() or not key.isascii():
        raise ApiError(422, f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters")
    return key


async def _fingerprint(request: Request) -> str:
    """The request a key stands for: method, path, query and the body's JSON (key order
    and whitespace do not matter)."""
    raw = await request.body()
    try:
        body: object = orjson.loads(raw) if raw.strip() else None
        canonical = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        canonical = raw
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.url.path.encode(), request.url.query.encode()):
        digest.update(part + b"\0")
    digest.update(canonical)
    return digest.hexdigest()


async def idempotent(
    request: Request,
    runtime: AppRuntime,
    access: Access,
    act: Action,
    replay: Replayer = replay_json,
) -> Response:
    """`act()` once per user and key; a repeat of the request gets `replay(record)`."""
    key = _key_of(request)
    ttl = runtime.config.runs.idempotency_ttl_s
    if key is None or ttl <= 0:
        return (await act())[0]
    mine = _Key(access.identity, key, await _fingerprint(request))
    keys = IdempotencyKeys(runtime)
    deadline = time.monotonic() + WAIT_S
    while True:
        found = await keys.claim(
            owner_id=mine.owner_id,
            key=mine.key,
            fingerprint=mine.fingerprint,
            ttl_s=ttl,
            stale_s=STALE_S,
        )
        if found is None:
            break
        if found.fingerprint != mine.fingerprint:
            raise ApiError(
                422,
                f"{HEADER} {key!r} was already used with a different request; "
                "use a new key for a new request",
            )
        if found.state == "done" and found.result is not None:
            response = await replay(found.result)
            response.headers[REPLAYED_HEADER] = "true"
            return response
        if time.monotonic() >= deadline:
            raise ApiError(409, f"A request with {HEADER} {key!r} is still in progress; retry")
        await asyncio.sleep(POLL_S)
    try:
        response, record = await act()
    except BaseException:
        await asyncio.shield(keys.release(owner_id=mine.owner_id, key=key))
        raise
    await keys.finish(owner_id=mine.owner_id, key=mine.key, result=record)
    return response
