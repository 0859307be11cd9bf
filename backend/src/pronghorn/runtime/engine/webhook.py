"""Completion webhooks: POSTed in the background with retries; never block or fail a run.

A webhook URL comes from the client, so the gateway must not become its proxy into the
network it sits in. Every attempt vets the URL as ``web_fetch`` does
(:mod:`pronghorn.web.ssrf`: loopback, private, link-local, metadata and the same addresses in
any spelling are refused unless ``runs.webhook_allow_private_addresses``; metadata always),
then connects to the vetted address itself (pinned, so DNS rebinding cannot redirect it),
with no proxy from the environment and no redirects followed.
"""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import UTC, datetime

import httpx

from pronghorn.persistence.records.json_object import JsonObject
from pronghorn.runtime.events.serialization import dumps
from pronghorn.web.ssrf import BlockedURLError, FetchError, check_static, pinned_request, vet_url

log = logging.getLogger("pronghorn.webhook")


class WebhookRefusedError(ValueError):
    """A webhook URL that will never be called; ``str(error)`` says why."""


def check_webhook_url(url: str, *, allow_private: bool) -> None:
    """Refuse at accept time what can be refused without DNS (scheme, credentials, a
    literal internal address). Names are vetted again, with DNS, at every delivery."""
    try:
        check_static(httpx.URL(url), allow_private=allow_private)
    except httpx.InvalidURL as exc:
        raise WebhookRefusedError(f"Invalid webhook URL: {exc}") from None
    except BlockedURLError as exc:
        raise WebhookRefusedError(f"Webhook refused: {exc}") from None


def _where(url: str) -> str:
    """The scheme and host of a URL, for logs (its path and query may carry a token)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "<invalid url>"
    return f"{parsed.scheme}://{parsed.host}"


class WebhookSender:
    def __init__(self, *, timeout_s: float, retries: int) -> None:
        self.timeout_s = timeout_s
        self.retries = retries
        # trust_env=False: a proxy would resolve the name itself and defeat the pinning.
        self._client = httpx.AsyncClient(timeout=timeout_s, follow_redirects=False, trust_env=False)
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, url: str, payload: JsonObject, *, allow_private: bool = False) -> None:
        task = asyncio.create_task(self._deliver(url, payload, allow_private), name="webhook")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, url: str, body: bytes, allow_private: bool) -> httpx.Response:
        target = httpx.URL(url)
        ip = await vet_url(target, allow_private=allow_private)
        pinned, headers, extensions = pinned_request(target, ip)
        headers["Content-Type"] = "application/json"
        request = self._client.build_request(
            "POST", pinned, content=body, headers=headers, extensions=extensions
        )
        return await self._client.send(request)

    async def _deliver(self, url: str, payload: JsonObject, allow_private: bool) -> None:
        delay = 0.5
        run_id = payload.get("run_id")
        for attempt in range(self.retries + 1):
            body = dumps(dict(payload, webhook_sent_at=datetime.now(UTC).isoformat()))
            try:
                resp = await self._post(url, body, allow_private)
                if resp.status_code < 500 and resp.status_code != 429:
                    if resp.status_code >= 400:
                        log.warning(
                            "webhook rejected",
                            extra={"status": resp.status_code, "run_id": run_id},
                        )
                    return
                reason = f"HTTP {resp.status_code}"
            except BlockedURLError as exc:
                log.warning(
                    "webhook refused",
                    extra={"reason": str(exc), "target": _where(url), "run_id": run_id},
                )
                return
            except (httpx.HTTPError, httpx.InvalidURL, FetchError) as exc:
                reason = type(exc).__name__
            if attempt < self.retries:
                log.info(
                    "webhook retry",
                    extra={"reason": reason, "attempt": attempt + 1, "run_id": run_id},
                )
                await asyncio.sleep(delay + random.uniform(0, delay / 2))
                delay = min(delay * 2, 10)
            else:
                log.warning("webhook failed", extra={"reason": reason, "run_id": run_id})

    async def aclose(self, grace_s: float = 5.0) -> None:
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace_s)
        for task in list(self._tasks):
            task.cancel()
        await self._client.aclose()
