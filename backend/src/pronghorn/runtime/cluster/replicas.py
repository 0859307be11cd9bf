"""Who is serving: each gateway process (a replica) publishes a card about itself — its id
(the run manager's owner id, as on the runs it executes), host, pid, config version, when it
started and was last seen, how many runs it holds — and `/api/config/status` lists them.

With `broker.kind: redis` the cards live in Redis, refreshed every `every_s` and expiring
after `ttl_s`, so a replica that died drops off the list on its own:
- `<p>:replica:<id>` — the card (JSON), `SET ... PX ttl`;
- `<p>:replicas` — the set of ids ever announced; ids whose card expired are removed when
  the list is read.
With the in-memory broker there is one process, and the list is its own card.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import AsyncGenerator, Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, cast

from pronghorn.config.loader import public_config_hash

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from pronghorn.runtime.wiring.app_runtime import AppRuntime

log = logging.getLogger("pronghorn.replicas")

EVERY_S = 5.0
TTL_S = 15.0


@dataclass(frozen=True, kw_only=True)
class ReplicaCard:
    replica_id: str
    host: str
    pid: int
    config_version: str
    started_at: str
    last_seen: str
    runs_active: int

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: bytes | str) -> ReplicaCard | None:
        try:
            data = json.loads(raw)
            return cls(
                replica_id=str(data["replica_id"]),
                host=str(data["host"]),
                pid=int(data["pid"]),
                config_version=str(data["config_version"]),
                started_at=str(data["started_at"]),
                last_seen=str(data["last_seen"]),
                runs_active=int(data["runs_active"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class ReplicaDirectory(Protocol):
    transient: tuple[type[BaseException], ...]
    """What a lost connection to the directory raises (tried again next round)."""

    async def publish(self, card: ReplicaCard) -> None:
        """Announce (or refresh) this replica's card."""
        ...

    async def cards(self) -> list[ReplicaCard]:
        """Every live replica's card, sorted by start time."""
        ...

    async def withdraw(self, replica_id: str) -> None:
        """This replica is stopping: drop its card now."""
        ...


class LocalReplicas:
    """One process: the list is the last card it published."""

    def __init__(self) -> None:
        self._card: ReplicaCard | None = None
        self.transient: tuple[type[BaseException], ...] = ()  # nothing to lose

    async def publish(self, card: ReplicaCard) -> None:
        self._card = card

    async def cards(self) -> list[ReplicaCard]:
        return [self._card] if self._card is not None else []

    async def withdraw(self, replica_id: str) -> None:
        self._card = None


class RedisReplicas:
    """Cards in Redis (see the module doc). Redis errors propagate: the caller decides."""

    def __init__(self, client: Redis, *, prefix: str, ttl_s: float = TTL_S) -> None:
        from pronghorn.runtime.events.redis_keys import TRANSIENT  # redis: only when it is used

        self.transient = TRANSIENT
        self.client = client
        self.prefix = prefix
        self.ttl_ms = max(1, int(ttl_s * 1000))

    def _card_key(self, replica_id: str) -> str:
        return f"{self.prefix}:replica:{replica_id}"

    @property
    def _set_key(self) -> str:
        return f"{self.prefix}:replicas"

    async def publish(self, card: ReplicaCard) -> None:
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.set(self._card_key(card.replica_id), card.to_json(), px=self.ttl_ms)
            pipe.sadd(self._set_key, card.replica_id)
            await pipe.execute()

    async def cards(self) -> list[ReplicaCard]:
        members = cast("set[bytes]", await self.client.smembers(self._set_key))  # pyright: ignore[reportUnknownMemberType]
        ids = sorted(m.decode() for m in members)
        if not ids:
            return []
        raws = cast("list[bytes | None]", await self.client.mget([self._card_key(i) for i in ids]))
        found: list[ReplicaCard] = []
        gone: list[str] = []
        for replica_id, raw in zip(ids, raws, strict=True):
            card = ReplicaCard.from_json(raw) if raw is not None else None
            if card is None:
                gone.append(replica_id)
            else:
                found.append(card)
        if gone:
            await self.client.srem(self._set_key, *gone)  # pyright: ignore[reportUnknownMemberType]
        return sorted(found, key=lambda c: (c.started_at, c.replica_id))

    async def withdraw(self, replica_id: str) -> None:
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._card_key(replica_id))
            pipe.srem(self._set_key, replica_id)
            await pipe.execute()


class ReplicaPresence:
    """This replica's side: builds its card from live values and keeps it published."""

    def __init__(
        self,
        directory: ReplicaDirectory,
        *,
        replica_id: str,
        config_version: Callable[[], str],
        runs_active: Callable[[], int],
        every_s: float = EVERY_S,
    ) -> None:
        self.directory = directory
        self.every_s = every_s
        self._config_version = config_version
        self._runs_active = runs_active
        self._base = ReplicaCard(
            replica_id=replica_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            config_version="",
            started_at=now_iso(),
            last_seen="",
            runs_active=0,
        )
        self._task: asyncio.Task[None] | None = None

    @property
    def replica_id(self) -> str:
        return self._base.replica_id

    def card(self) -> ReplicaCard:
        return replace(
            self._base,
            config_version=self._config_version(),
            last_seen=now_iso(),
            runs_active=self._runs_active(),
        )

    async def publish(self) -> ReplicaCard:
        card = self.card()
        await self.directory.publish(card)
        return card

    async def cluster(self) -> tuple[list[ReplicaCard], bool]:
        """(every replica's card, this one's fresh; whether the others could be read)."""
        mine = self.card()
        try:
            await self.directory.publish(mine)
            others = [c for c in await self.directory.cards() if c.replica_id != mine.replica_id]
        except self.directory.transient as exc:
            log.warning("replica directory unreachable: %s", exc)
            return [mine], False
        return sorted([mine, *others], key=lambda c: (c.started_at, c.replica_id)), True

    async def _loop(self) -> None:
        while True:
            try:
                await self.publish()
            except self.directory.transient as exc:  # Redis away: try again next round
                log.debug("replica card not published: %s", exc)
            await asyncio.sleep(self.every_s)

    async def start(self) -> None:
        with contextlib.suppress(*self.directory.transient):
            await self.publish()
        self._task = asyncio.create_task(self._loop(), name="replica-presence")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(*self.directory.transient):
            await self.directory.withdraw(self.replica_id)


@contextlib.asynccontextmanager
async def presence_for(
    directory: ReplicaDirectory,
    *,
    replica_id: str,
    config_version: Callable[[], str],
    runs_active: Callable[[], int],
    every_s: float = EVERY_S,
) -> AsyncGenerator[ReplicaPresence, None]:
    presence = ReplicaPresence(
        directory,
        replica_id=replica_id,
        config_version=config_version,
        runs_active=runs_active,
        every_s=every_s,
    )
    await presence.start()
    try:
        yield presence
    finally:
        await presence.aclose()


@contextlib.asynccontextmanager
async def replicas(runtime: AppRuntime) -> AsyncGenerator[None, None]:
    """The component: after `runs` (the card shows its owner id and how many runs it has)."""
    cfg = runtime.config.broker
    settings = runtime.settings
    manager = runtime.runs

    def version() -> str:  # as `version_hash` in the status (secrets masked)
        return public_config_hash(settings.current)

    def active() -> int:
        return manager.in_memory

    async with contextlib.AsyncExitStack() as stack:
        directory: ReplicaDirectory
        if cfg.kind == "redis":
            from pronghorn.runtime.events.redis_broker import redis_client

            client = await stack.enter_async_context(redis_client(cfg.redis_url, block_s=1.0))
            directory = RedisReplicas(client, prefix=cfg.key_prefix)
        else:
            directory = LocalReplicas()
        runtime.replicas = await stack.enter_async_context(
            presence_for(
                directory, replica_id=manager.owner, config_version=version, runs_active=active
            )
        )
        yield
