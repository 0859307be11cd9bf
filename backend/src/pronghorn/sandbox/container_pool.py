"""The live sandbox containers of one gateway: made on demand, kept warm, capped, reaped.

A container is *busy* while a command runs in it and *idle* otherwise. An idle container is
kept for its thread's (or user's) next command — a warm start — until it has been idle for
``idle_timeout_s``, or until more than ``warm_pool`` containers are idle (the longest idle
go first), or until its slot is needed: at ``max_containers`` a new container replaces the
longest idle one, and when every container is busy the command waits up to
``queue_timeout_s`` for one, then fails with a clear error.

Every container carries labels (``container_spec``); at start the pool lists the containers
its instance left behind (a crash, a kill) and adopts the running ones or removes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import cast

import aiodocker
from aiodocker.containers import DockerContainer

from pronghorn.config.schema.app import SandboxConfig
from pronghorn.sandbox import container_spec as cs
from pronghorn.sandbox.errors import SandboxError

log = logging.getLogger(__name__)


@dataclass
class _Live:
    key: str
    digest: str
    container: DockerContainer
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


def engine_error(exc: BaseException) -> SandboxError:
    """A sentence for the model (and the log) about a failure of the engine."""
    if isinstance(exc, aiodocker.DockerError):
        if exc.status == 404 and "image" in str(exc.message).lower():
            return SandboxError(
                f"The sandbox image is missing on the Docker engine ({exc.message}); build it "
                "with docker/sandbox.Dockerfile (docs/sandbox.md, Container sandbox)."
            )
        if exc.status >= 900:  # aiodocker's status for "no connection at all"
            return SandboxError(f"The sandbox's Docker engine is unreachable: {exc.message}")
        return SandboxError(f"The Docker engine refused a sandbox call: {exc.message}")
    return SandboxError(f"The sandbox's Docker engine is unreachable: {exc}")


def _labels(container: DockerContainer) -> Mapping[str, object]:
    """The labels in the engine listing's summary of ``container`` (its JSON)."""
    if "Labels" not in container:
        return {}
    labels: object = container["Labels"]
    return cast(Mapping[str, object], labels) if isinstance(labels, Mapping) else {}


class ContainerPool:
    def __init__(self, docker: aiodocker.Docker, config: SandboxConfig) -> None:
        self._docker = docker
        self._config = config
        self._cfg = config.container
        self._live: dict[str, _Live] = {}
        self._creating: set[str] = set()
        self._removing = 0
        self._cond = asyncio.Condition()
        self._reaper: asyncio.Task[None] | None = None
        self._removals: set[asyncio.Task[None]] = set()

    # -- state ------------------------------------------------------------------------------

    def _filters(self) -> dict[str, list[str]]:
        return {"label": [f"{cs.LABEL_SANDBOX}=1", f"{cs.LABEL_INSTANCE}={self._cfg.instance}"]}

    # -- start and stop ---------------------------------------------------------------------

    async def start(self) -> None:
        """Adopt or remove what this instance left behind, then start reaping idle ones."""
        try:
            # aiodocker leaves the **kwargs of list() (the engine's query) unannotated
            found = await self._docker.containers.list(all=True, filters=self._filters())  # pyright: ignore[reportUnknownMemberType]
        except (aiodocker.DockerError, OSError) as exc:
            raise engine_error(exc) from None
        for container in found:
            labels = _labels(container)
            key = str(labels.get(cs.LABEL_KEY, ""))
            running = "State" in container and container["State"] == "running"
            adopt = (
                self._cfg.orphans == "adopt"
                and running
                and key
                and key not in self._live
                and len(self._live) < self._cfg.max_containers
            )
            if adopt:
                digest = str(labels.get(cs.LABEL_SPEC, ""))
                self._live[key] = _Live(key, digest, container)
                log.info("sandbox: adopted container %s (%s)", container.id[:12], key)
            else:
                log.info("sandbox: removing orphan container %s (%s)", container.id[:12], key)
                await self._delete(container)
        self._reaper = asyncio.create_task(self._reap_forever(), name="sandbox-container-reaper")

    async def close(self, *, keep: bool = False) -> None:
        """Stop reaping; remove every live container unless ``keep`` (a restart adopts them)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        if self._removals:
            await asyncio.gather(*self._removals, return_exceptions=True)
        if not keep:
            victims = [live.container for live in self._live.values()]
            self._live.clear()
            await asyncio.gather(*(self._delete(c) for c in victims))

    # -- leases -----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lease(self, spec: cs.ContainerSpec) -> AsyncGenerator[DockerContainer, None]:
        """A running container of ``spec`` for one command (made, or reused warm). When the
        engine says the container is gone or stopped (killed, removed from outside), it is
        forgotten, so the next lease makes a new one."""
        live = await self._take(spec)
        gone = False
        try:
            yield live.container
        except aiodocker.DockerError as exc:
            gone = exc.status in (404, 409)
            raise
        finally:
            async with self._cond:
                live.busy -= 1
                live.last_used = time.monotonic()
                if gone and self._live.get(live.key) is live and not live.busy:
                    log.warning("sandbox: container %s is gone; a new one will be made", live.key)
                    self._drop(live)
                self._trim_idle(self._cfg.warm_pool)
                self._cond.notify_all()

    async def _take(self, spec: cs.ContainerSpec) -> _Live:
        digest = spec.digest(self._config)
        deadline = time.monotonic() + self._cfg.queue_timeout_s
        hard_deadline = deadline + self._cfg.start_timeout_s
        async with self._cond:
            while True:
                live = self._live.get(spec.key)
                if live is not None and live.digest == digest:
                    live.busy += 1
                    return live
                if live is not None and live.busy == 0:  # settings changed: replace it
                    self._drop(live)
                    continue
                if live is None and spec.key not in self._creating:
                    if self._count() < self._cfg.max_containers:
                        self._creating.add(spec.key)
                        break
                    if self._trim_idle(len(self._idle()) - 1):  # the longest idle makes room
                        continue
                # Waiting for a removal or for this key's container being made is progress,
                # bounded by start_timeout_s; waiting for a busy slot, by queue_timeout_s.
                making_room = self._removing > 0 or spec.key in self._creating
                left = (hard_deadline if making_room else deadline) - time.monotonic()
                if left <= 0:
                    raise SandboxError(
                        f"All {self._cfg.max_containers} sandbox containers are busy "
                        "(sandbox.container.max_containers); try the command again later."
                    )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await self._cond.wait()
        try:
            container = await self._create(spec)
        except BaseException:
            async with self._cond:
                self._creating.discard(spec.key)
                self._cond.notify_all()
            raise
        async with self._cond:
            self._creating.discard(spec.key)
            live = _Live(spec.key, digest, container, busy=1)
            self._live[spec.key] = live
            self._cond.notify_all()
        return live

    def _count(self) -> int:
        return len(self._live) + len(self._creating) + self._removing

    def _idle(self) -> list[_Live]:
        """Idle containers, the longest idle first."""
        return sorted(
            (lv for lv in self._live.values() if not lv.busy), key=lambda lv: lv.last_used
        )

    def _trim_idle(self, keep: int) -> bool:
        """Remove the longest idle containers until at most ``keep`` idle ones are left
        (call with the condition held); True if any was removed."""
        idle = self._idle()
        extra = idle[: max(0, len(idle) - max(0, keep))]
        for live in extra:
            self._drop(live)
        return bool(extra)

    def _drop(self, live: _Live) -> None:
        """Forget ``live`` and remove its container in the background (it counts against
        the cap until it is gone). Call with the condition held."""
        del self._live[live.key]
        self._removing += 1
        task = asyncio.create_task(self._remove_counted(live.container))
        self._removals.add(task)
        task.add_done_callback(self._removals.discard)

    async def _remove_counted(self, container: DockerContainer) -> None:
        try:
            await self._delete(container)
        finally:
            async with self._cond:
                self._removing -= 1
                self._cond.notify_all()

    async def _delete(self, container: DockerContainer) -> None:
        try:
            await container.delete(force=True, v=True)
        except aiodocker.DockerError as exc:
            if exc.status != 404:
                log.warning("sandbox: cannot remove container %s: %s", container.id[:12], exc)
        except OSError as exc:
            log.warning("sandbox: cannot remove container %s: %s", container.id[:12], exc)

    async def _create(self, spec: cs.ContainerSpec) -> DockerContainer:
        for bind in spec.binds:
            await asyncio.to_thread(cs.check_bind, bind)
        body = cs.create_body(spec, self._config)
        container: DockerContainer | None = None
        try:
            async with asyncio.timeout(self._cfg.start_timeout_s):
                container = await self._docker.containers.create(body)
                await container.start()  # pyright: ignore[reportUnknownMemberType]  # aiodocker: unannotated **kwargs
        except TimeoutError:
            if container is not None:
                await self._delete(container)
            raise SandboxError(
                f"The sandbox container did not start within {self._cfg.start_timeout_s:g} s "
                "(sandbox.container.start_timeout_s)."
            ) from None
        except (aiodocker.DockerError, OSError) as exc:
            if container is not None:
                await self._delete(container)
            raise engine_error(exc) from None
        log.info("sandbox: started container %s for %s", container.id[:12], spec.key)
        return container

    # -- reaping ----------------------------------------------------------------------------

    async def _reap_forever(self) -> None:
        period = min(self._cfg.idle_timeout_s / 2, 30.0)
        while True:
            await asyncio.sleep(period)
            await self.reap()

    async def reap(self) -> int:
        """Remove containers idle for longer than ``idle_timeout_s``; how many went."""
        now = time.monotonic()
        async with self._cond:
            stale = [
                lv
                for lv in self._live.values()
                if not lv.busy and now - lv.last_used >= self._cfg.idle_timeout_s
            ]
            for live in stale:
                self._drop(live)
        return len(stale)
