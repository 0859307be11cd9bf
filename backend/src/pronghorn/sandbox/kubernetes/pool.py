"""The live sandbox pods of this gateway: started on first use, found again by their
deterministic names, deleted when idle or to make room under the cap, adopted (or removed)
when the gateway starts.

Every Kubernetes call this file makes is one the sandbox Role allows (pods: create, get,
list, watch, delete; networkpolicies: create) — ``test_kubernetes_rbac`` checks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from lightkube import ApiError, AsyncClient
from lightkube.core.client import LabelValue
from lightkube.resources.core_v1 import Pod

from pronghorn.config.schema.app import SandboxConfig
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.kubernetes import spec
from pronghorn.sandbox.kubernetes.api import TransportError, describe, reachable
from pronghorn.sandbox.kubernetes.status import read_state

log = logging.getLogger(__name__)

Clock = Callable[[], float]


@dataclass(eq=False)
class LivePod:
    name: str
    ip: str
    token: str
    last_used: float
    busy: int = 0

    def url(self, port: int) -> str:
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"http://{host}:{port}"


@dataclass
class _Locks:
    by_name: dict[str, asyncio.Lock] = field(default_factory=dict)

    def get(self, name: str) -> asyncio.Lock:
        return self.by_name.setdefault(name, asyncio.Lock())


class PodPool:
    def __init__(self, config: SandboxConfig, client: AsyncClient, clock: Clock) -> None:
        self._config = config
        self._cfg = config.kubernetes
        self._client = client
        self._clock = clock
        key = self._cfg.agent_token_key
        self._adoptable = key is not None
        self._secret = (
            key.get_secret_value().encode() if key is not None else secrets.token_bytes(32)
        )
        self._pods: dict[str, LivePod] = {}
        self._starting: set[str] = set()
        self._room = asyncio.Lock()
        self._locks = _Locks()

    @property
    def live(self) -> dict[str, LivePod]:
        return self._pods

    @property
    def adoptable(self) -> bool:
        return self._adoptable

    # -- startup ---------------------------------------------------------------------------

    async def ensure_network_policy(self) -> None:
        policy = spec.build_network_policy(self._config)
        try:
            with reachable("creating the sandbox NetworkPolicy"):
                await self._client.create(policy)
        except ApiError as exc:
            if exc.status.code != 409:  # 409: it exists (manifests or an earlier start)
                raise SandboxError(
                    f"cannot create the sandbox NetworkPolicy in namespace "
                    f"{self._cfg.namespace}: {describe(exc)}"
                ) from None

    async def adopt_orphans(self) -> tuple[int, int]:
        """Pods of this deployment left by an earlier process: adopted when their token can
        be derived (``agent_token_key``) and they are ready, else deleted. Returns
        (adopted, removed)."""
        adopted = removed = 0
        # lightkube's client names its label-selector operator classes without type
        # arguments, so its list/watch methods (and LabelValue) are partially unknown to the
        # checker: the `pyright: ignore`s on those calls in this file
        labels = dict[str, LabelValue](spec.selector(self._cfg))  # pyright: ignore[reportUnknownVariableType]
        try:
            with reachable("listing sandbox pods"):
                found = [
                    pod
                    async for pod in self._client.list(  # pyright: ignore[reportUnknownMemberType]
                        Pod, namespace=self._cfg.namespace, labels=labels
                    )
                ]
        except ApiError as exc:
            raise SandboxError(f"cannot list the sandbox pods: {describe(exc)}") from None
        for pod in found:
            meta = pod.metadata
            if meta is None or meta.name is None or meta.deletionTimestamp is not None:
                continue
            state = read_state(pod)
            pod_labels = cast("dict[str, str] | None", meta.labels) or {}  # lightkube: bare Dict
            fits = pod_labels.get(spec.EGRESS_LABEL) == spec.egress_mode(self._config)
            if (
                self._adoptable
                and fits
                and state.ready_ip is not None
                and len(self._pods) < self._cfg.max_pods
            ):
                token = spec.agent_token(self._secret, meta.name)
                self._pods[meta.name] = LivePod(meta.name, state.ready_ip, token, self._clock())
                adopted += 1
            else:
                await self.delete(meta.name)
                removed += 1
        if adopted or removed:
            log.info("sandbox pods at startup: %d adopted, %d removed", adopted, removed)
        return adopted, removed

    # -- use -------------------------------------------------------------------------------

    async def get(self, key: spec.SandboxKey) -> LivePod:
        """The ready pod serving ``key``, started (or found) on first use."""
        name = spec.pod_name(self._cfg, key)
        live = self._pods.get(name)
        if live is not None:
            return live
        async with self._locks.get(name):
            live = self._pods.get(name)
            if live is not None:
                return live
            await self._reserve(name)
            try:
                with reachable("starting the sandbox pod"):
                    live = await self._start(key, name)
            finally:
                self._starting.discard(name)
            self._pods[name] = live
            return live

    async def _reserve(self, name: str) -> None:
        async with self._room:
            while len(self._pods) + len(self._starting) >= self._cfg.max_pods:
                idle = [p for p in self._pods.values() if p.busy == 0]
                if not idle:
                    raise SandboxError(
                        f"All {self._cfg.max_pods} sandbox pods (sandbox.kubernetes.max_pods) "
                        "are busy running commands; try again when one is done."
                    )
                oldest = min(idle, key=lambda p: p.last_used)
                log.info(
                    "sandbox pod cap reached: deleting the least recently used %s", oldest.name
                )
                self._pods.pop(oldest.name, None)
                await self.delete(oldest.name)
            self._starting.add(name)

    def touch(self, live: LivePod) -> None:
        live.last_used = self._clock()

    async def forget(self, live: LivePod) -> None:
        """Drop a pod that stopped answering (and delete what is left of it)."""
        if self._pods.get(live.name) is live:
            del self._pods[live.name]
        await self.delete(live.name)

    async def stopped(self, live: LivePod, settle_s: float = 3.0) -> str | None:
        """Why ``live`` is no longer serving (and forget it), or None while it is. A pod that
        still looks ready is watched for ``settle_s``: the kubelet reports a dead container
        a moment after its connections broke."""
        try:
            pod = await self._get(live.name)
        except (SandboxError, TransportError) as exc:
            log.warning("cannot read sandbox pod %s: %s", live.name, exc)
            return None
        reason: str | None = "the pod was deleted"
        if pod is not None:
            reason = self._not_serving(pod, live)
            if reason is None:
                reason = await self._watch_for_stop(live, pod, settle_s)
        if reason is None:
            return None
        if self._pods.get(live.name) is live:
            del self._pods[live.name]
        await self.delete(live.name)
        return reason

    @staticmethod
    def _not_serving(pod: Pod, live: LivePod) -> str | None:
        state = read_state(pod)
        if state.ready_ip is not None and state.ready_ip == live.ip:
            return None
        return state.failure or state.summary

    async def _watch_for_stop(self, live: LivePod, pod: Pod, settle_s: float) -> str | None:
        version = pod.metadata.resourceVersion if pod.metadata else None
        events = self._client.watch(  # pyright: ignore[reportUnknownMemberType]
            Pod,
            namespace=self._cfg.namespace,
            fields={"metadata.name": live.name},
            resource_version=version,
            server_timeout=max(int(settle_s), 1),
        )
        try:
            async with asyncio.timeout(settle_s):
                async for kind, event_pod in events:
                    if kind == "DELETED":
                        return "the pod was deleted"
                    reason = self._not_serving(event_pod, live)
                    if reason is not None:
                        return reason
        except TimeoutError:
            return None
        except ApiError as exc:
            log.warning("watching sandbox pod %s failed: %s", live.name, describe(exc))
            return None
        except TransportError as exc:
            log.warning("watching sandbox pod %s failed: %s", live.name, exc)
            return None
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        return None

    async def _start(self, key: spec.SandboxKey, name: str) -> LivePod:
        token = spec.agent_token(self._secret, name)
        pod = spec.build_pod(self._config, key, token)
        try:
            current = await self._client.create(pod)
        except ApiError as exc:
            if exc.status.code != 409:
                raise SandboxError(
                    f"The sandbox pod could not be created: {describe(exc)}. Check "
                    "sandbox.kubernetes (namespace, image, service account) and "
                    "`pronghorn doctor`."
                ) from None
            current = await self._get(name)  # another replica (or process) made it
            if current is None:
                raise SandboxError("The sandbox pod vanished while starting; try again.") from None
        try:
            ip = await self._wait_ready(name, current)
        except BaseException:
            await self.delete(name)
            raise
        log.info("sandbox pod %s ready at %s", name, ip)
        return LivePod(name, ip, token, self._clock())

    async def _get(self, name: str) -> Pod | None:
        try:
            return await self._client.get(Pod, name, namespace=self._cfg.namespace)
        except ApiError as exc:
            if exc.status.code == 404:
                return None
            raise SandboxError(f"cannot read sandbox pod {name}: {describe(exc)}") from None

    async def _wait_ready(self, name: str, pod: Pod) -> str:
        state = read_state(pod)
        summary = state.summary
        timeout = self._cfg.start_timeout_s
        try:
            async with asyncio.timeout(timeout):
                while True:
                    if state.failure is not None:
                        raise SandboxError(f"The sandbox pod failed to start: {state.failure}.")
                    if state.ready_ip is not None:
                        return state.ready_ip
                    version = pod.metadata.resourceVersion if pod.metadata else None
                    events = self._client.watch(  # pyright: ignore[reportUnknownMemberType]
                        Pod,
                        namespace=self._cfg.namespace,
                        fields={"metadata.name": name},
                        resource_version=version,
                        server_timeout=max(int(timeout), 1),
                    )
                    try:
                        async for kind, event_pod in events:
                            if kind == "DELETED":
                                raise SandboxError("The sandbox pod was deleted while it started.")
                            pod = event_pod
                            state = read_state(pod)
                            summary = state.summary
                            if state.failure is not None or state.ready_ip is not None:
                                break
                    finally:  # close the watch's stream now, not when collected
                        close = getattr(events, "aclose", None)
                        if close is not None:
                            await close()
        except TimeoutError:
            raise SandboxError(
                f"The sandbox pod did not become ready within {timeout:g}s "
                f"(sandbox.kubernetes.start_timeout_s); last status: {summary}."
            ) from None
        except ApiError as exc:
            raise SandboxError(f"watching the sandbox pod failed: {describe(exc)}") from None

    # -- reaping ---------------------------------------------------------------------------

    async def reap_idle(self) -> list[str]:
        """Delete the pods unused for ``idle_timeout_s``; returns their names."""
        limit = self._clock() - self._cfg.idle_timeout_s
        gone = [p for p in self._pods.values() if p.busy == 0 and p.last_used <= limit]
        for live in gone:
            self._pods.pop(live.name, None)
            await self.delete(live.name)
        if gone:
            log.info("deleted %d idle sandbox pod(s)", len(gone))
        return [p.name for p in gone]

    async def delete(self, name: str) -> None:
        try:
            await self._client.delete(Pod, name, namespace=self._cfg.namespace)
        except ApiError as exc:
            if exc.status.code != 404:
                log.warning("could not delete sandbox pod %s: %s", name, describe(exc))
        except TransportError as exc:  # the reaper or the next start tries again
            log.warning("could not delete sandbox pod %s: %s", name, exc)

    async def delete_all(self) -> None:
        names = list(self._pods)
        self._pods.clear()
        for name in names:
            with contextlib.suppress(Exception):
                await self.delete(name)


def monotonic() -> float:
    return time.monotonic()
