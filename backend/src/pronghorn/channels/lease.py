"""One receiver per channel across gateway replicas: a lease with a time to live.

The replica holding `channels:<name>` runs that channel's receiver (Telegram long polling,
a platform socket); the others stand by and try to take it every `ttl/3`. The holder
renews at the same pace and gives it up when it stops, so a clean stop hands over within
one retry, a crash within `ttl` plus one retry.

With `broker.kind: redis` the lease is a Redis key (`SET NX PX` with a random token, renewed
and released by Lua scripts that compare the token first). Otherwise it is a row of
`channel_leases` in the database (PostgreSQL or a shared SQLite file): the replicas share
the database anyway, and a row lease needs no connection held open per channel, which a
PostgreSQL session advisory lock would.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Protocol

from pronghorn.runtime.cluster.channel_lease import SqlLease
from pronghorn.runtime.wiring.app_runtime import AppRuntime

if TYPE_CHECKING:
    from redis.asyncio import Redis

# KEYS: the lease. ARGV: token, ttl (ms). 1 when renewed, 0 when it is no longer ours.
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# KEYS: the lease. ARGV: token. Deletes it only if it is still ours.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Lease(Protocol):
    holder: str

    async def take(self, channel: str, ttl_s: float) -> bool:
        """Take or renew the lease of `channel`; False while another replica holds it."""
        ...

    async def give_up(self, channel: str) -> None:
        """Release it if it is still ours."""


class RedisLease:
    def __init__(self, client: Redis, prefix: str, holder: str) -> None:
        self.client = client
        self.prefix = prefix
        self.holder = holder
        self._held: set[str] = set()

    def _key(self, channel: str) -> str:
        return f"{self.prefix}:channel-lease:{channel}"

    async def take(self, channel: str, ttl_s: float) -> bool:
        key, ms = self._key(channel), max(1, int(ttl_s * 1000))
        if channel in self._held:
            renewed = await self.client.eval(RENEW, 1, key, self.holder, ms)  # type: ignore[misc]
            if renewed:
                return True
            self._held.discard(channel)
        taken = await self.client.set(key, self.holder, nx=True, px=ms)
        if taken:
            self._held.add(channel)
        return bool(taken)

    async def give_up(self, channel: str) -> None:
        self._held.discard(channel)
        await self.client.eval(RELEASE, 1, self._key(channel), self.holder)  # type: ignore[misc]


def lease_for(runtime: AppRuntime) -> Lease:
    """Redis when the broker is Redis, else the database; one random holder token per
    manager (so a restarted process is a new holder)."""
    holder = secrets.token_hex(16)
    broker = runtime.broker
    if runtime.config.broker.kind == "redis":
        from pronghorn.runtime.events.redis_broker import RedisBroker  # redis: only when it is used

        if isinstance(broker, RedisBroker):
            return RedisLease(broker.client, runtime.config.broker.key_prefix, holder)
    return SqlLease(runtime.db, holder)
