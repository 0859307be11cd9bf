"""The container sandbox (``sandbox.kind: container``): commands run in a container made
through the Docker Engine API (aiodocker), one per thread or per user.

The thread's folders are bind-mounted into the container, so the file tools work on the host
side exactly as in the local sandbox (the same code: paths contained, links refused,
bounded reads); only commands go into the container. See ``container_spec`` for what a
container is made of and ``container_pool`` for its lifecycle.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
from pathlib import Path

import aiodocker

from pronghorn.config.schema.app import AppConfig, SandboxConfig
from pronghorn.sandbox import container_spec as cs
from pronghorn.sandbox import hostuid, quota
from pronghorn.sandbox.base import CommandResult, Sandbox, command_timeout
from pronghorn.sandbox.container_exec import run_in_container
from pronghorn.sandbox.container_pool import ContainerPool, engine_error
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.limits import human_bytes
from pronghorn.sandbox.local import LocalSandbox
from pronghorn.sandbox.mounts import MountSource, ReadOnlyMount
from pronghorn.sandbox.paths import VIRTUAL_ROOT, VIRTUAL_WORKSPACE, ThreadPaths

log = logging.getLogger(__name__)

_VIRTUAL_ROOT_RE = re.compile(re.escape(VIRTUAL_ROOT) + r"(?=/|$|[^A-Za-z0-9_.-])")


class ContainerSandbox:
    """One thread's sandbox: file tools on the host (over the bind mounts), commands in the
    thread's (or user's) container."""

    def __init__(
        self,
        provider: ContainerSandboxProvider,
        paths: ThreadPaths,
        spec: cs.ContainerSpec,
        mounts: tuple[ReadOnlyMount, ...],
    ) -> None:
        self._provider = provider
        self._paths = paths
        self._spec = spec
        self._config = provider.config
        # The file tools are the local sandbox's, on the same folders.
        self._files = LocalSandbox(paths, provider.config, "none", None, mounts=mounts)

    @property
    def thread_paths(self) -> ThreadPaths:
        return self._paths

    @property
    def spec(self) -> cs.ContainerSpec:
        return self._spec

    async def execute(self, command: str, timeout_s: float | None = None) -> CommandResult:
        timeout = command_timeout(command, timeout_s, self._config.command_timeout_s)
        await asyncio.to_thread(self._paths.ensure)
        quota_bytes = self._config.limits.workspace_quota_bytes
        if quota_bytes and (used := await self._usage()) > quota_bytes:
            raise SandboxError(self._over_quota(used) + "; the command was not run")
        await self._provider.prepare(self._paths, self._spec)
        inner, workdir, env = command, VIRTUAL_WORKSPACE, cs.sandbox_env()
        here = ""
        if self._spec.thread_id == "":  # user scope: this thread's folder in the user's
            here = f"{cs.USER_THREADS}/{self._paths.thread_id}"
            inner = _VIRTUAL_ROOT_RE.sub(lambda _: here, command)
            workdir = env["HOME"] = f"{here}/workspace"
        result = None
        for attempt in (1, 2):  # a container killed or removed from outside is made anew
            try:
                async with self._provider.pool.lease(self._spec) as container:
                    result = await run_in_container(
                        container,
                        inner,
                        user=self._spec.run_as,
                        workdir=workdir,
                        env=env,
                        timeout_s=timeout,
                        max_output_chars=self._config.max_output_chars,
                    )
                break
            except aiodocker.DockerError as exc:
                if attempt == 2 or exc.status not in (404, 409):
                    raise engine_error(exc) from None
            except OSError as exc:
                raise engine_error(exc) from None
        assert result is not None
        if here:
            result = CommandResult(
                exit_code=result.exit_code,
                stdout=result.stdout.replace(here, VIRTUAL_ROOT),
                stderr=result.stderr.replace(here, VIRTUAL_ROOT),
                timed_out=result.timed_out,
                truncated=result.truncated,
            )
        if quota_bytes and (used := await self._usage()) > quota_bytes:
            return CommandResult(
                exit_code=result.exit_code,
                stdout=result.stdout,
                stderr=f"{result.stderr}\n[sandbox limit] {self._over_quota(used)}".lstrip("\n"),
                timed_out=result.timed_out,
                truncated=result.truncated,
                limits_hit=("quota",),
            )
        return result

    async def _usage(self) -> int:
        usage = await asyncio.to_thread(quota.measure, self._paths.root)
        if not usage.complete:
            return max(usage.bytes, self._config.limits.workspace_quota_bytes + 1)
        return usage.bytes

    def _over_quota(self, used: int) -> str:
        quota_bytes = self._config.limits.workspace_quota_bytes
        return (
            f"workspace quota exceeded: the thread's folders use {human_bytes(used)} of "
            f"{human_bytes(quota_bytes)} (sandbox.limits.workspace_quota_bytes); delete files"
        )

    # -- files: the local sandbox's, on the bind-mounted folders ----------------------------

    async def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        return await self._files.read_file(path, start_line, end_line)

    async def write_file(self, path: str, content: str, append: bool = False) -> None:
        await self._files.write_file(path, content, append)

    async def str_replace(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        return await self._files.str_replace(path, old, new, replace_all)

    async def list_dir(self, path: str, max_depth: int = 2) -> list[str]:
        return await self._files.list_dir(path, max_depth)

    async def glob(self, pattern: str, path: str | None = None) -> list[str]:
        return await self._files.glob(pattern, path)

    async def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_matches: int = 200,
    ) -> list[str]:
        return await self._files.grep(pattern, path, glob, max_matches)


class ContainerSandboxProvider:
    """Hands out :class:`ContainerSandbox` objects; owns the Docker client and the pool."""

    def __init__(self, config: AppConfig, *, mounts: MountSource | None = None) -> None:
        self._config = config.sandbox
        self._mounts = mounts
        self._data_dir = Path(config.data_dir).expanduser().resolve()
        self._docker: aiodocker.Docker | None = None
        self._pool: ContainerPool | None = None
        self._start_lock = asyncio.Lock()

    @property
    def config(self) -> SandboxConfig:
        return self._config

    @property
    def data_dir(self) -> Path:
        return self._data_dir

    @property
    def pool(self) -> ContainerPool:
        if self._pool is None:
            raise SandboxError("The container sandbox is not started.")
        return self._pool

    async def start(self) -> None:
        """Connect to the engine and adopt or remove this instance's orphans."""
        async with self._start_lock:
            if self._pool is not None:
                return
            if os.geteuid() == 0 and not self._config.limits.host_uid_base:
                raise SandboxError(
                    "sandbox.kind container: the gateway runs as root and "
                    "sandbox.limits.host_uid_base is 0, so no non-root uid is left for the "
                    "sandbox's processes"
                )
            try:
                docker = aiodocker.Docker(url=self._config.container.docker_url)
            except (ValueError, OSError) as exc:
                raise engine_error(exc) from None
            pool = ContainerPool(docker, self._config)
            try:
                await pool.start()
            except BaseException:
                await docker.close()
                raise
            self._docker, self._pool = docker, pool
            log.info(
                "sandbox kind=container (image %s, scope %s, network %s)",
                self._config.container.image,
                self._config.container.scope,
                self._config.container.network_name if self._config.network else "none",
            )

    def paths_for(self, user_id: str, thread_id: str) -> ThreadPaths:
        try:
            return ThreadPaths.for_thread(self._data_dir, user_id, thread_id)
        except ValueError as exc:
            raise SandboxError(str(exc)) from None

    def _run_as(self, key: str) -> str:
        if os.geteuid() != 0:
            return f"{os.geteuid()}:{os.getegid()}"
        base = self._config.limits.host_uid_base
        slot = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % hostuid.SLOTS
        return f"{base + 1 + slot}:{base}"

    def spec_for(self, paths: ThreadPaths, mounts: tuple[ReadOnlyMount, ...]) -> cs.ContainerSpec:
        if self._config.container.scope == "user":
            key = f"u:{paths.user_id}"
            return cs.ContainerSpec(
                key=key,
                user_id=paths.user_id,
                thread_id="",
                run_as=self._run_as(key),
                binds=cs.user_binds(paths.root.parent, mounts),
                workdir=cs.USER_THREADS,
            )
        key = f"t:{paths.user_id}/{paths.thread_id}"
        return cs.ContainerSpec(
            key=key,
            user_id=paths.user_id,
            thread_id=paths.thread_id,
            run_as=self._run_as(key),
            binds=cs.thread_binds(paths.root, mounts),
            workdir=VIRTUAL_WORKSPACE,
        )

    async def prepare(self, paths: ThreadPaths, spec: cs.ContainerSpec) -> None:
        """As root, give the thread's folders to the container's uid (files the file tools
        wrote since are root's); a non-root gateway shares its own uid with the container."""
        if os.geteuid() != 0:
            return
        uid, gid = (int(part) for part in spec.run_as.split(":"))
        try:
            await asyncio.to_thread(hostuid.prepare, paths, self._data_dir, uid, gid)
        except OSError as exc:
            raise SandboxError(f"cannot prepare the sandbox's folders for its uid: {exc}") from None

    async def acquire(self, user_id: str, thread_id: str) -> Sandbox:
        await self.start()
        paths = self.paths_for(user_id, thread_id)
        await asyncio.to_thread(paths.ensure)
        ro = await self._mounts.mounts_for(user_id) if self._mounts is not None else ()
        return ContainerSandbox(self, paths, self.spec_for(paths, ro), ro)

    async def release(self, sandbox: Sandbox) -> None:
        return None

    async def close(self, *, keep_containers: bool = False) -> None:
        """Remove this gateway's containers (``keep_containers``: leave them for the next
        start to adopt) and close the engine client."""
        pool, docker = self._pool, self._docker
        self._pool = self._docker = None
        if pool is not None:
            await pool.close(keep=keep_containers)
        if docker is not None:
            await docker.close()
