"""``sandbox.kind: kubernetes``: a pod per thread (or per user), created through the
Kubernetes API; commands and file operations go to the sandbox agent in the pod over HTTP
with the pod's own token (docs/sandbox.md, "Kubernetes")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import cast

import httpx
from lightkube import AsyncClient
from pydantic import BaseModel, ValidationError

from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.kubernetes import SandboxKubernetesConfig
from pronghorn.sandbox.agent import protocol as p
from pronghorn.sandbox.base import Sandbox
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.kubernetes import spec
from pronghorn.sandbox.kubernetes.api import make_client
from pronghorn.sandbox.kubernetes.pool import Clock, LivePod, PodPool, monotonic
from pronghorn.sandbox.kubernetes.sandbox import KubernetesSandbox
from pronghorn.sandbox.paths import ThreadPaths, user_folder

log = logging.getLogger(__name__)


class KubernetesSandboxProvider:
    """Call :meth:`start` once (network policy, orphans, reaper), then :meth:`acquire`."""

    def __init__(
        self,
        config: AppConfig,
        *,
        client: AsyncClient | None = None,
        clock: Clock = monotonic,
    ) -> None:
        self._config = config.sandbox
        self._cfg = config.sandbox.kubernetes
        self._data_dir = Path(config.data_dir).expanduser().resolve()
        self._client = client if client is not None else make_client(self._cfg)
        self._pool = PodPool(self._config, self._client, clock)
        # No keep-alive: a connection to a pod that died is never reused, so a dead pod is a
        # refused (or timed out) connect, which is known to have run nothing.
        self._http = httpx.AsyncClient(
            trust_env=False,
            timeout=FILE_TIMEOUT,
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self._reaper: asyncio.Task[None] | None = None
        self._started = False

    @property
    def pool(self) -> PodPool:
        return self._pool

    @property
    def settings(self) -> SandboxKubernetesConfig:
        return self._cfg

    async def start(self) -> None:
        if self._started:
            return
        await self._pool.ensure_network_policy()
        await self._pool.adopt_orphans()
        self._reaper = asyncio.create_task(self._reap_forever(), name="sandbox-pod-reaper")
        self._started = True

    async def _reap_forever(self) -> None:
        interval = min(max(self._cfg.idle_timeout_s / 4, 1.0), 60.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await self._pool.reap_idle()
            except Exception:  # an API hiccup must not end the reaper
                log.exception("reaping idle sandbox pods failed")

    def paths_for(self, user_id: str, thread_id: str) -> ThreadPaths:
        try:
            return ThreadPaths.for_thread(self._data_dir, user_id, thread_id)
        except ValueError as exc:
            raise SandboxError(str(exc)) from None

    async def acquire(self, user_id: str, thread_id: str) -> Sandbox:
        paths = self.paths_for(user_id, thread_id)
        # The pod mounts this folder (subPath): it must exist, owned by the gateway.
        await asyncio.to_thread(paths.ensure)
        per_user = self._cfg.scope == "user"
        key = spec.SandboxKey(
            scope=self._cfg.scope,
            user_id=user_folder(user_id),
            thread_id=None if per_user else paths.thread_id,
        )
        return KubernetesSandbox(paths, key, self._config, self)

    async def release(self, sandbox: Sandbox) -> None:
        return None

    async def call(
        self, key: spec.SandboxKey, path: str, body: BaseModel, timeout_s: float
    ) -> object:
        """POST ``body`` to the agent of ``key``'s pod; a pod that cannot be reached, or that
        refuses the token, is replaced once (nothing ran there)."""
        payload = body.model_dump_json().encode()
        for attempt in (1, 2):
            live = await self._pool.get(key)
            try:
                response = await self._post(live, path, payload, timeout_s)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                log.warning("sandbox pod %s cannot be reached; replacing it", live.name)
                await self._pool.forget(live)
                if attempt == 2:
                    raise SandboxError(
                        "The sandbox pod cannot be reached (it was replaced once already)."
                    ) from None
                continue
            except _AnswerLost as lost:
                raise SandboxError(await self._lost_message(live, lost.reason)) from None
            if response.status_code == 401 and attempt == 1:
                # Made with another agent_token_key (rotated): replace it.
                log.warning("sandbox pod %s refused this gateway's token; replacing it", live.name)
                await self._pool.forget(live)
                continue
            return _answer(response)
        raise AssertionError("unreachable")

    async def _lost_message(self, live: LivePod, reason: str) -> str:
        """The connection broke mid-call: if the pod stopped, say why (and let the next call
        start a new one); the call is not repeated, it may have run in part."""
        stopped = await self._pool.stopped(live)
        if stopped is not None:
            return (
                f"The sandbox pod stopped during the call ({stopped}); a new one starts on "
                "the next call, with the thread's files but no running processes."
            )
        return f"The sandbox pod's answer was lost: {reason}"

    async def _post(
        self, live: LivePod, path: str, payload: bytes, timeout_s: float
    ) -> httpx.Response:
        live.busy += 1
        self._pool.touch(live)
        try:
            return await self._http.post(
                f"{live.url(self._cfg.agent_port)}{p.API_PREFIX}{path}",
                content=payload,
                headers={
                    "authorization": f"Bearer {live.token}",
                    "content-type": "application/json",
                },
                timeout=httpx.Timeout(timeout_s, connect=10.0),
            )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise
        except httpx.TimeoutException:
            raise SandboxError(f"The sandbox pod did not answer within {timeout_s:g}s.") from None
        except httpx.HTTPError as exc:
            raise _AnswerLost(str(exc) or type(exc).__name__) from None
        finally:
            live.busy -= 1
            self._pool.touch(live)

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        if not self._pool.adoptable:  # nobody else can talk to them: do not leave them
            await self._pool.delete_all()
        await self._http.aclose()
        await self._client.close()


FILE_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


class _AnswerLost(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _answer(response: httpx.Response) -> object:
    try:
        data: object = response.json()
    except ValueError:
        raise SandboxError(
            f"The sandbox agent answered {response.status_code} with no JSON."
        ) from None
    if response.status_code == 200:
        if isinstance(data, dict):
            body = cast(dict[str, object], data)  # the agent's JSON
            return body.get("result", body)
        return data
    try:
        error = p.ErrorBody.model_validate(data)
    except ValidationError:
        raise SandboxError(f"The sandbox agent answered {response.status_code}.") from None
    if error.error == "path_denied":
        raise PathDeniedError(error.detail)
    if error.error == "unauthorized":
        raise SandboxError("The sandbox agent refused the gateway's token.")
    raise SandboxError(error.detail)
