"""The local sandbox: thread folders on this machine, commands run with bash either inside
bubblewrap (``isolation: bwrap``) or directly on the host (``isolation: none``, weaker).

Commands always get a fixed, minimal environment (PATH, HOME, LANG, TERM, TMPDIR) — never
the gateway's own environment, so API keys and tokens of the gateway are not visible.
"""

from __future__ import annotations

import asyncio
import logging
import re
import tempfile
from pathlib import Path
from typing import Literal

from pronghorn.config.schema import AppConfig, SandboxConfig
from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox import files
from pronghorn.sandbox.base import CommandResult, Sandbox
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import VIRTUAL_ROOT, VIRTUAL_WORKSPACE, ThreadPaths
from pronghorn.sandbox.process import run_process

log = logging.getLogger(__name__)

Isolation = Literal["bwrap", "none"]
_VIRTUAL_ROOT_RE = re.compile(re.escape(VIRTUAL_ROOT) + r"(?=/|$|[^A-Za-z0-9_.-])")


def sandbox_env(home: str, tmpdir: str) -> dict[str, str]:
    """The whole environment a command gets. Nothing is inherited from the gateway."""
    return {
        "PATH": bw.SANDBOX_PATH,
        "HOME": home,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": tmpdir,
    }


class LocalSandbox:
    """One thread's sandbox. Cheap: holds paths and settings, no live process."""

    def __init__(
        self,
        paths: ThreadPaths,
        config: SandboxConfig,
        isolation: Isolation,
        bwrap_path: str | None,
    ) -> None:
        if isolation == "bwrap" and not bwrap_path:
            raise ValueError("isolation=bwrap needs the bwrap executable")
        self._paths = paths
        self._config = config
        self._isolation: Isolation = isolation
        self._bwrap = bwrap_path

    @property
    def thread_paths(self) -> ThreadPaths:
        return self._paths

    @property
    def isolation(self) -> Isolation:
        return self._isolation

    # -- commands ---------------------------------------------------------------------------

    async def execute(self, command: str, timeout_s: float | None = None) -> CommandResult:
        if not isinstance(command, str) or not command.strip():
            raise SandboxError("The command is empty.")
        if "\x00" in command:
            raise SandboxError("The command contains a NUL byte.")
        timeout = self._config.command_timeout_s if timeout_s is None else float(timeout_s)
        if timeout <= 0:
            raise SandboxError("timeout must be positive.")
        await asyncio.to_thread(self._paths.ensure)
        cap = self._config.max_output_chars
        if self._isolation == "bwrap":
            assert self._bwrap is not None
            env = sandbox_env(VIRTUAL_WORKSPACE, "/tmp")
            argv = bw.build_argv(
                self._bwrap, self._paths, command, network=self._config.network, env=env
            )
            return await run_process(
                argv,
                cwd=str(self._paths.workspace),
                env=env,
                timeout_s=timeout,
                max_output_chars=cap,
            )
        # isolation=none: the host's filesystem is visible; only the virtual prefix is
        # rewritten so commands written for /mnt/user-data keep working.
        root = str(self._paths.root)
        host_command = _VIRTUAL_ROOT_RE.sub(lambda _: root, command)
        env = sandbox_env(str(self._paths.workspace), tempfile.gettempdir())
        result = await run_process(
            ["/bin/bash", "-c", host_command],
            cwd=str(self._paths.workspace),
            env=env,
            timeout_s=timeout,
            max_output_chars=cap,
        )
        return CommandResult(
            exit_code=result.exit_code,
            stdout=result.stdout.replace(root, VIRTUAL_ROOT),
            stderr=result.stderr.replace(root, VIRTUAL_ROOT),
            timed_out=result.timed_out,
            truncated=result.truncated,
        )

    # -- files ------------------------------------------------------------------------------

    async def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        return await asyncio.to_thread(
            files.read_file,
            self._paths,
            path,
            start_line,
            end_line,
            self._config.max_output_chars,
        )

    async def write_file(self, path: str, content: str, append: bool = False) -> None:
        await asyncio.to_thread(files.write_file, self._paths, path, content, append)

    async def str_replace(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        return await asyncio.to_thread(files.str_replace, self._paths, path, old, new, replace_all)

    async def list_dir(self, path: str, max_depth: int = 2) -> list[str]:
        return await asyncio.to_thread(files.list_dir, self._paths, path, max_depth)

    async def glob(self, pattern: str, path: str | None = None) -> list[str]:
        return await asyncio.to_thread(files.glob, self._paths, pattern, path)

    async def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_matches: int = 200,
    ) -> list[str]:
        return await asyncio.to_thread(files.grep, self._paths, pattern, path, glob, max_matches)


class LocalSandboxProvider:
    """Hands out :class:`LocalSandbox` objects. ``isolation_in_effect`` is known after
    :meth:`start` (called automatically by the first :meth:`acquire`)."""

    def __init__(self, config: AppConfig) -> None:
        self._config = config.sandbox
        self._data_dir = Path(config.data_dir).expanduser().resolve()
        self._isolation: Isolation | None = None
        self._bwrap: str | None = None
        self._start_lock = asyncio.Lock()

    @property
    def data_dir(self) -> Path:
        return self._data_dir

    @property
    def isolation_in_effect(self) -> Isolation | None:
        """``bwrap`` or ``none`` once started; ``None`` before."""
        return self._isolation

    async def start(self) -> Isolation:
        async with self._start_lock:
            if self._isolation is not None:
                return self._isolation
            if self._config.isolation == "none":
                log.warning(
                    "sandbox isolation=none: commands run directly on the host as the gateway's "
                    "user; only the environment is scrubbed"
                )
                self._isolation = "none"
                return self._isolation
            path = bw.find_bwrap()
            if path is None:
                reason = "bwrap is not installed (apt-get install bubblewrap)"
                ok = False
            else:
                ok, reason = await bw.probe(path, network=self._config.network)
            if ok:
                self._bwrap = path
                self._isolation = "bwrap"
                log.info("sandbox isolation=bwrap (%s, network=%s)", path, self._config.network)
            else:
                log.warning(
                    "SANDBOX ISOLATION DISABLED: sandbox.isolation=bwrap but %s; falling back "
                    "to isolation=none — agent commands run directly on the host",
                    reason,
                )
                self._isolation = "none"
            return self._isolation

    def paths_for(self, user_id: str, thread_id: str) -> ThreadPaths:
        try:
            return ThreadPaths.for_thread(self._data_dir, user_id, thread_id)
        except ValueError as exc:
            raise SandboxError(str(exc)) from None

    async def acquire(self, user_id: str, thread_id: str) -> Sandbox:
        isolation = await self.start()
        paths = self.paths_for(user_id, thread_id)
        await asyncio.to_thread(paths.ensure)
        return LocalSandbox(paths, self._config, isolation, self._bwrap)

    async def release(self, sandbox: Sandbox) -> None:
        return None

    async def close(self) -> None:
        return None
