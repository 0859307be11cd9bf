"""Completion webhooks: POSTed in the background with retries; never block or fail a run."""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import UTC, datetime
from typing import Any

import httpx

from pronghorn.gateway.serialization import dumps

log = logging.getLogger("pronghorn.webhook")


class WebhookSender:
    def __init__(self, *, timeout_s: float, retries: int) -> None:
        self.timeout_s = timeout_s
        self.retries = retries
        self._client = httpx.AsyncClient(timeout=timeout_s, follow_redirects=False)
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, url: str, payload: dict[str, Any]) -> None:
        task = asyncio.create_task(self._deliver(url, payload), name="webhook")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, url: str, payload: dict[str, Any]) -> None:
        delay = 0.5
        for attempt in range(self.retries + 1):
            body = dict(payload, webhook_sent_at=datetime.now(UTC).isoformat())
            try:
                resp = await self._client.post(
                    url, content=dumps(body), headers={"Content-Type": "application/json"}
                )
                if resp.status_code < 500 and resp.status_code != 429:
                    if resp.status_code >= 400:
                        log.warning(
                            "webhook rejected",
                            extra={"status": resp.status_code, "run_id": payload.get("run_id")},
                        )
                    return
                reason = f"HTTP {resp.status_code}"
            except httpx.HTTPError as exc:
                reason = type(exc).__name__
            if attempt < self.retries:
                log.info(
                    "webhook retry",
                    extra={
                        "reason": reason,
                        "attempt": attempt + 1,
                        "run_id": payload.get("run_id"),
                    },
                )
                await asyncio.sleep(delay + random.uniform(0, delay / 2))
                delay = min(delay * 2, 10)
            else:
                log.warning(
                    "webhook failed", extra={"reason": reason, "run_id": payload.get("run_id")}
                )

    async def aclose(self, grace_s: float = 5.0) -> None:
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace_s)
        for task in list(self._tasks):
            task.cancel()
        await self._client.aclose()
