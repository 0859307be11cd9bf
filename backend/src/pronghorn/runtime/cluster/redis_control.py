"""`RedisControlBus`: the control bus (engine/control.py) over Redis pub/sub, one channel per run
manager (`<prefix>:ctl:<replica>`).

Each listener also subscribes to the broadcast channel (`<prefix>:ctl:*`, control.BROADCAST).
`send` is one `PUBLISH`; Redis answers how many subscribers got it, which is how the sender
knows whether the replica executing the run is alive. The listener reconnects by itself
after Redis comes back (while it is away, its channel has no subscriber, and the other
replicas get `ControlUnavailable` or "nobody listens").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import cast

from redis.asyncio import Redis

from pronghorn.runtime.engine.control import (
    BROADCAST,
    ControlHandler,
    ControlMessage,
    ControlUnavailable,
)
from pronghorn.runtime.events.redis_keys import MAX_BACKOFF_S, TRANSIENT, Keys, retrying

log = logging.getLogger("pronghorn.broker")

POLL_S = 1.0


def _unavailable(exc: BaseException) -> ControlUnavailable:
    return ControlUnavailable(f"The control channel (Redis) is unreachable: {exc}")


class RedisControlBus:
    def __init__(self, client: Redis, *, prefix: str, retry_s: float) -> None:
        self.client = client
        self.keys = Keys(prefix)
        self.retry_s = retry_s
        self._task: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    async def listen(self, replica: str, handler: ControlHandler) -> None:
        self._task = asyncio.create_task(self._loop(replica, handler), name="control-listener")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), timeout=self.retry_s)
        if not self.listening:
            log.warning("control channel not reachable yet; still trying")

    async def _loop(self, replica: str, handler: ControlHandler) -> None:
        channel = self.keys.control(replica)
        delay = 0.05
        while True:
            try:
                pubsub = self.client.pubsub()  # pyright: ignore[reportUnknownMemberType]
                async with pubsub:
                    await pubsub.subscribe(channel, self.keys.control(BROADCAST))
                    self._listening.set()
                    delay = 0.05
                    while True:
                        msg = cast(
                            "dict[str, object] | None",
                            await pubsub.get_message(
                                ignore_subscribe_messages=True, timeout=POLL_S
                            ),
                        )
                        data = msg.get("data") if msg is not None else None
                        if msg is None or msg.get("type") != "message":
                            continue
                        if not isinstance(data, (bytes, str)):
                            continue
                        message = ControlMessage.decode(data)
                        if message is None:
                            log.warning("ignored a malformed control message")
                            continue
                        try:
                            handler(message)
                        except Exception:
                            log.exception("control message handler failed")
            except TRANSIENT as exc:
                if self._listening.is_set():
                    log.warning("control channel lost; reconnecting", extra={"error": str(exc)})
                self._listening.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)

    async def send(self, replica: str, message: ControlMessage) -> bool:
        channel, body = self.keys.control(replica), message.encode()

        async def publish() -> int:
            return await self.client.publish(channel, body)  # type: ignore[misc]

        received = await retrying(publish, patience_s=min(self.retry_s, 1.0), fail=_unavailable)
        return received > 0

    async def alive(self, replica: str) -> bool:
        channel = self.keys.control(replica)

        async def numsub() -> list[tuple[bytes, int]]:
            return await self.client.pubsub_numsub(channel)  # type: ignore[misc]

        counts = await retrying(numsub, patience_s=min(self.retry_s, 1.0), fail=_unavailable)
        return any(int(n) > 0 for _, n in counts)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._listening.clear()
