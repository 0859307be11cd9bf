"""The local sandbox: thread folders on this machine, commands run with bash either inside
bubblewrap (``isolation: bwrap``) or directly on the host (``isolation: none``, weaker).

Commands always get a fixed, minimal environment (PATH, HOME, LANG, TERM, TMPDIR) — never
the gateway's own environment, so API keys and tokens of the gateway are not visible.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pronghorn.config.schema.app import AppConfig, SandboxConfig
from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox import cgroups, files, hostuid, quota, seccomp
from pronghorn.sandbox import mounts as mnt
from pronghorn.sandbox.base import CommandResult, Sandbox, command_timeout
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.limits import (
    CgroupEvents,
    CommandLimits,
    human_bytes,
    limit_notes,
    plan_limits,
)
from pronghorn.sandbox.mounts import MountSource, ReadOnlyMount
from pronghorn.sandbox.paths import VIRTUAL_ROOT, VIRTUAL_WORKSPACE, ThreadPaths
from pronghorn.sandbox.process import Watchdog, run_process

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


# The watchdog measures the thread's folders at most this often, and never spends more than
# about 1/QUOTA_DUTY of the time walking them.
QUOTA_CHECK_S = 2.0
QUOTA_DUTY = 20


@dataclass(frozen=True, slots=True)
class Enforcement:
    """How limits are enforced, decided once when the provider starts."""

    cgroups: cgroups.CgroupSupport
    seccomp_program: bytes | None  # None: no filter (isolation=none, off, unknown arch)
    nproc_counts: bool  # RLIMIT_NPROC holds (bwrap, and not root or a host uid per sandbox)
    seccomp_reason: str = ""
    # Root without a pids cgroup: commands run as a host uid of their own sandbox.
    host_ids: hostuid.HostIds | None = None
    # Why commands are refused: nothing here bounds their processes ("" = they run).
    refusal: str = ""

    @staticmethod
    def none() -> Enforcement:
        return Enforcement(cgroups.CgroupSupport(None, reason="cgroups off"), None, False)


class LocalSandbox:
    """One thread's sandbox. Cheap: holds paths and settings, no live process."""

    def __init__(
        self,
        paths: ThreadPaths,
        config: SandboxConfig,
        isolation: Isolation,
        bwrap_path: str | None,
        enforcement: Enforcement | None = None,
        mounts: tuple[ReadOnlyMount, ...] = (),
    ) -> None:
        if isolation == "bwrap" and not bwrap_path:
            raise ValueError("isolation=bwrap needs the bwrap executable")
        self._paths = paths
        self._config = config
        self._isolation: Isolation = isolation
        self._bwrap = bwrap_path
        self._enforcement = enforcement or Enforcement.none()
        self._mounts = mounts

    @property
    def mounts(self) -> tuple[ReadOnlyMount, ...]:
        return self._mounts

    @property
    def thread_paths(self) -> ThreadPaths:
        return self._paths

    @property
    def isolation(self) -> Isolation:
        return self._isolation

    # -- commands ---------------------------------------------------------------------------

    async def execute(self, command: str, timeout_s: float | None = None) -> CommandResult:
        timeout = command_timeout(command, timeout_s, self._config.command_timeout_s)
        if self._enforcement.refusal:
            raise SandboxError(refusal_message(self._enforcement.refusal))
        await asyncio.to_thread(self._paths.ensure)
        cfg = self._config.limits
        quota_left = None
        if cfg.workspace_quota_bytes:
            quota_left = cfg.workspace_quota_bytes - await self._usage()
        cgroup = await self._new_cgroup()
        if (
            cfg.processes
            and self._enforcement.cgroups.has("pids")
            and (cgroup is None or "pids" not in cgroup.folders)
            and not self._enforcement.nproc_counts
        ):  # the pids cgroup was the only bound and could not be made for this command
            raise SandboxError(refusal_message("no pids cgroup could be made for the command"))
        limits = plan_limits(
            cfg,
            quota_left=quota_left,
            cgroup_pids=cgroup is not None and "pids" in cgroup.folders and bool(cfg.processes),
            cgroup_memory=cgroup is not None
            and "memory" in cgroup.folders
            and bool(cfg.memory_bytes),
            nproc_counts=self._enforcement.nproc_counts,
        )
        quota_stop: list[str] = []
        try:
            result = await self._run(command, timeout, limits, cgroup, quota_stop)
            events = CgroupEvents()
            if cgroup is not None:
                events = await asyncio.to_thread(cgroup.events)
        finally:
            if cgroup is not None and not await asyncio.to_thread(cgroup.remove):
                log.warning("could not remove the command cgroup %s", cgroup.folders)
        notes = limit_notes(
            limits, cfg, exit_code=result.exit_code, stderr=result.stderr, events=events
        )
        if quota_stop:
            notes.append(("quota", ""))  # the sentence is already in stderr (watchdog)
        elif any(key == "quota" for key, _ in notes):
            pass  # a write was stopped at the quota: that sentence says it
        elif quota_left is not None and quota_left <= 0:
            used = cfg.workspace_quota_bytes - quota_left
            notes.append(("quota", self._over_quota_sentence(used)))
        elif cfg.workspace_quota_bytes:
            used = await self._usage()
            if used > cfg.workspace_quota_bytes:
                notes.append(("quota", self._over_quota_sentence(used)))
        extra = "".join(f"\n[sandbox limit] {text}" for _, text in notes if text)
        stderr = (result.stderr + extra).lstrip("\n") if extra else result.stderr
        hit = tuple(dict.fromkeys(key for key, _ in notes))
        return CommandResult(
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=stderr,
            timed_out=result.timed_out,
            truncated=result.truncated,
            limits_hit=hit,
        )

    def _over_quota_sentence(self, used: int) -> str:
        quota_bytes = self._config.limits.workspace_quota_bytes
        return (
            f"workspace quota exceeded: the thread's folders use {human_bytes(used)} of "
            f"{human_bytes(quota_bytes)} (sandbox.limits.workspace_quota_bytes); no file can "
            "grow until you delete files"
        )

    async def _usage(self) -> int:
        usage = await asyncio.to_thread(quota.measure, self._paths.root)
        if not usage.complete:  # too many entries to count: treat as full
            return max(usage.bytes, self._config.limits.workspace_quota_bytes)
        return usage.bytes

    async def _new_cgroup(self) -> cgroups.CommandCgroup | None:
        support = self._enforcement.cgroups
        if not support.parents:
            return None
        cfg = self._config.limits
        try:
            return await asyncio.to_thread(
                cgroups.create,
                support,
                pids_max=cfg.processes,
                memory_max=cfg.memory_bytes,
                cpu_cores=cfg.cpu_cores,
            )
        except OSError as exc:
            log.warning("cannot create a cgroup for the command (%s); rlimits only", exc)
            return None

    def _quota_watchdog(self, stop: list[str]) -> Watchdog:
        quota_bytes = self._config.limits.workspace_quota_bytes
        state = {"next": 0.0}

        async def check() -> str | None:
            now = time.monotonic()
            if now < state["next"]:
                return None
            used = await self._usage()
            state["next"] = time.monotonic() + (time.monotonic() - now) * QUOTA_DUTY
            if used <= quota_bytes:
                return None
            sentence = self._over_quota_sentence(used) + "; the command was stopped"
            stop.append(sentence)
            return sentence

        return check

    async def _run(
        self,
        command: str,
        timeout_s: float,
        limits: CommandLimits,
        cgroup: cgroups.CommandCgroup | None,
        quota_stop: list[str],
    ) -> CommandResult:
        cap = self._config.max_output_chars
        watchdog = (
            self._quota_watchdog(quota_stop) if self._config.limits.workspace_quota_bytes else None
        )
        if self._isolation == "bwrap":
            assert self._bwrap is not None
            env = sandbox_env(VIRTUAL_WORKSPACE, "/tmp")
            program = self._enforcement.seccomp_program
            fd = seccomp.filter_fd(program) if program is not None else None
            args_fd: int | None = None
            try:
                options, inner = bw.build_parts(
                    self._bwrap,
                    self._paths,
                    command,
                    network=self._config.network,
                    env=env,
                    limits=limits,
                    seccomp_fd=fd,
                    tmp_bytes=self._config.limits.tmp_bytes,
                    ro_mounts=self._mounts,
                )
                argv, args_fd = bw.hidden_argv(self._bwrap, options, inner)
                argv = await self._as_host_uid(argv)
                if cgroup is not None:
                    argv = cgroup.join_argv(argv)
                return await run_process(
                    argv,
                    # Not the workspace: a shell on the way exports PWD, which bwrap's pid 1
                    # would keep in its environment (readable inside as /proc/1/environ).
                    cwd="/",
                    env=env,
                    timeout_s=timeout_s,
                    max_output_chars=cap,
                    pass_fds=(args_fd,) if fd is None else (args_fd, fd),
                    watchdog=watchdog,
                    watch_interval_s=QUOTA_CHECK_S,
                )
            finally:
                for one in (fd, args_fd):
                    if one is not None:
                        os.close(one)
        # isolation=none: the host's filesystem is visible; only the virtual prefix is
        # rewritten so commands written for /mnt/user-data keep working.
        root = str(self._paths.root)
        host_command = _VIRTUAL_ROOT_RE.sub(lambda _: root, command)
        for mount in self._mounts:  # read-only only by convention here (see mounts.py)
            host_command = host_command.replace(mount.virtual, str(mount.host))
        env = sandbox_env(str(self._paths.workspace), tempfile.gettempdir())
        argv = limits.wrap(host_command)
        if cgroup is not None:
            argv = cgroup.join_argv(argv)
        result = await run_process(
            argv,
            cwd=str(self._paths.workspace),
            env=env,
            timeout_s=timeout_s,
            max_output_chars=cap,
            watchdog=watchdog,
            watch_interval_s=QUOTA_CHECK_S,
        )
        stdout = result.stdout.replace(root, VIRTUAL_ROOT)
        stderr = result.stderr.replace(root, VIRTUAL_ROOT)
        for mount in self._mounts:
            stdout = stdout.replace(str(mount.host), mount.virtual)
            stderr = stderr.replace(str(mount.host), mount.virtual)
        return CommandResult(
            exit_code=result.exit_code,
            stdout=stdout,
            stderr=stderr,
            timed_out=result.timed_out,
            truncated=result.truncated,
        )

    async def _as_host_uid(self, argv: list[str]) -> list[str]:
        """``argv`` started as this sandbox's host uid, when the gateway runs as root without
        a pids cgroup (see ``hostuid.py``); unchanged otherwise."""
        ids = self._enforcement.host_ids
        if ids is None:
            return argv
        uid = ids.uid_for(self._paths)
        try:
            await asyncio.to_thread(hostuid.prepare, self._paths, ids.data_dir, uid, ids.gid)
        except OSError as exc:
            raise SandboxError(f"cannot prepare the sandbox's folders for its uid: {exc}") from None
        return [*ids.prefix(uid), *argv]

    # -- files ------------------------------------------------------------------------------

    async def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        cap = self._config.max_output_chars
        hit = mnt.find(self._mounts, path)
        if hit is not None:
            mount, rest = hit
            shown = mnt.shown(path)
            return await asyncio.to_thread(
                mnt.read_lines, mount, rest, shown, start_line, end_line, cap
            )
        return await asyncio.to_thread(
            files.read_file, self._paths, path, start_line, end_line, cap
        )

    async def write_file(self, path: str, content: str, append: bool = False) -> None:
        if mnt.find(self._mounts, path) is not None:
            raise mnt.read_only_error(path)
        await asyncio.to_thread(files.write_file, self._paths, path, content, append)

    async def str_replace(self, path: str, old: str, new: str, replace_all: bool = False) -> int:
        if mnt.find(self._mounts, path) is not None:
            raise mnt.read_only_error(path)
        return await asyncio.to_thread(files.str_replace, self._paths, path, old, new, replace_all)

    async def list_dir(self, path: str, max_depth: int = 2) -> list[str]:
        hit = mnt.find(self._mounts, path)
        if hit is not None:
            shown = mnt.shown(path)
            return await asyncio.to_thread(mnt.list_dir, *hit, shown, max_depth)
        return await asyncio.to_thread(files.list_dir, self._paths, path, max_depth)

    async def glob(self, pattern: str, path: str | None = None) -> list[str]:
        hit = mnt.find(self._mounts, path)
        if hit is not None:
            shown = mnt.shown(path or "")
            return await asyncio.to_thread(mnt.glob, *hit, shown, pattern)
        return await asyncio.to_thread(files.glob, self._paths, pattern, path)

    async def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_matches: int = 200,
    ) -> list[str]:
        hit = mnt.find(self._mounts, path)
        if hit is not None:
            shown = mnt.shown(path or "")
            return await asyncio.to_thread(mnt.grep, *hit, shown, pattern, glob, max_matches)
        return await asyncio.to_thread(files.grep, self._paths, pattern, path, glob, max_matches)


class LocalSandboxProvider:
    """Hands out :class:`LocalSandbox` objects. ``isolation_in_effect`` is known after
    :meth:`start` (called automatically by the first :meth:`acquire`)."""

    def __init__(
        self,
        config: AppConfig,
        *,
        delegate_cgroups: bool = True,
        mounts: MountSource | None = None,
    ) -> None:
        """``delegate_cgroups=False`` (``pronghorn doctor``) never rearranges cgroups;
        ``mounts`` says which read-only folders (skills) a user's sandboxes show."""
        self._mounts = mounts
        self._config = config.sandbox
        self._delegate_cgroups = delegate_cgroups
        self._data_dir = Path(config.data_dir).expanduser().resolve()
        self._isolation: Isolation | None = None
        self._bwrap: str | None = None
        self._enforcement = Enforcement.none()
        self._start_lock = asyncio.Lock()

    @property
    def data_dir(self) -> Path:
        return self._data_dir

    @property
    def isolation_in_effect(self) -> Isolation | None:
        """``bwrap`` or ``none`` once started; ``None`` before."""
        return self._isolation

    @property
    def enforcement(self) -> Enforcement:
        """How limits are enforced (meaningful once started)."""
        return self._enforcement

    def limits_report(self) -> dict[str, object]:
        """Which limits are in force and by what mechanism (for ``pronghorn doctor``)."""
        return limits_report(self._config, self._isolation, self._enforcement)

    async def start(self) -> Isolation:
        async with self._start_lock:
            if self._isolation is not None:
                return self._isolation
            limits = self._config.limits
            support = cgroups.CgroupSupport(None, reason="sandbox.limits.cgroup is off")
            if limits.cgroup == "auto":
                support = await asyncio.to_thread(cgroups.detect, delegate=self._delegate_cgroups)
            if self._config.isolation == "none":
                log.warning(
                    "sandbox isolation=none: commands run directly on the host as the gateway's "
                    "user; only the environment is scrubbed"
                )
                self._isolation = "none"
                self._enforcement = Enforcement(
                    support, None, False, "isolation is none", refusal=self._root_refusal(support)
                )
                return self._isolation
            program, why = _seccomp_program(self._config)
            path = bw.find_bwrap()
            if path is None:
                reason = "bwrap is not installed (apt-get install bubblewrap)"
                ok = False
            else:
                ok, reason = await bw.probe(
                    path,
                    network=self._config.network,
                    seccomp_program=program,
                    tmp_bytes=limits.tmp_bytes,
                )
                if not ok and program is not None:
                    ok, plain = await bw.probe(
                        path, network=self._config.network, tmp_bytes=limits.tmp_bytes
                    )
                    if ok:
                        log.warning("sandbox: bwrap refused the seccomp filter (%s)", reason)
                        program, why = None, f"bwrap refused the filter: {reason}"
                    else:
                        reason = plain
            if ok:
                assert path is not None
                self._bwrap = path
                self._isolation = "bwrap"
                ids, refusal = None, ""
                root_why = self._root_refusal(support)
                if root_why:
                    ids, refusal = await self._host_ids(path, program, root_why)
                self._enforcement = Enforcement(
                    support,
                    program,
                    os.geteuid() != 0 or ids is not None,
                    why,
                    host_ids=ids,
                    refusal=refusal,
                )
                log.info(
                    "sandbox isolation=bwrap (%s, network=%s, seccomp=%s, cgroups=%s)",
                    path,
                    self._config.network,
                    program is not None,
                    support.version or "off",
                )
            else:
                self._enforcement = Enforcement(
                    support, None, False, "isolation is none", refusal=self._root_refusal(support)
                )
                log.warning(
                    "SANDBOX ISOLATION DISABLED: sandbox.isolation=bwrap but %s; falling back "
                    "to isolation=none — agent commands run directly on the host",
                    reason,
                )
                self._isolation = "none"
            return self._isolation

    def _root_refusal(self, support: cgroups.CgroupSupport) -> str:
        """Why nothing bounds a command's processes on the host itself ("" when something
        does): root is exempt from RLIMIT_NPROC, so only a pids cgroup holds."""
        if not self._config.limits.processes or support.has("pids") or os.geteuid() != 0:
            return ""
        return f"the gateway runs as root and has no pids cgroup ({support.reason})"

    async def _host_ids(
        self, bwrap: str, program: bytes | None, root: str
    ) -> tuple[hostuid.HostIds | None, str]:
        """Root without a pids cgroup (``root`` says so): commands as a host uid per
        sandbox, if that works here (probed with a real bwrap run under such a uid in the
        data dir)."""
        limits = self._config.limits
        if not limits.host_uid_base:
            return None, f"{root}; sandbox.limits.host_uid_base is 0"
        setpriv = hostuid.find_setpriv()
        if setpriv is None:
            return None, f"{root}; setpriv (util-linux) is not installed"
        ids = hostuid.HostIds(limits.host_uid_base, setpriv, self._data_dir)
        base = self._data_dir / "sandbox-probe"
        paths = ThreadPaths(
            user_id="probe",
            thread_id="00000000-0000-0000-0000-000000000000",
            root=base,
            workspace=base / "workspace",
            uploads=base / "uploads",
            outputs=base / "outputs",
        )
        uid = ids.uid_for(paths)
        try:
            await asyncio.to_thread(paths.ensure)
            await asyncio.to_thread(hostuid.prepare, paths, self._data_dir, uid, ids.gid)
        except OSError as exc:
            return None, f"{root}; cannot prepare folders for a sandbox uid: {exc}"
        ok, reason = await bw.probe(
            bwrap,
            network=self._config.network,
            seccomp_program=program,
            tmp_bytes=limits.tmp_bytes,
            paths=paths,
            prefix=ids.prefix(uid),
        )
        if not ok:
            return None, (
                f"{root}; bwrap cannot run as host uid {uid}: {reason} (the folders above "
                f"the data dir {self._data_dir} must be searchable by others: chmod o+x)"
            )
        log.info("sandbox: no pids cgroup as root; commands run as a host uid per sandbox")
        return ids, ""

    def paths_for(self, user_id: str, thread_id: str) -> ThreadPaths:
        try:
            return ThreadPaths.for_thread(self._data_dir, user_id, thread_id)
        except ValueError as exc:
            raise SandboxError(str(exc)) from None

    async def acquire(self, user_id: str, thread_id: str) -> Sandbox:
        isolation = await self.start()
        paths = self.paths_for(user_id, thread_id)
        await asyncio.to_thread(paths.ensure)
        ro = await self._mounts.mounts_for(user_id) if self._mounts is not None else ()
        return LocalSandbox(
            paths, self._config, isolation, self._bwrap, self._enforcement, mounts=ro
        )

    async def release(self, sandbox: Sandbox) -> None:
        return None

    async def close(self) -> None:
        return None


def refusal_message(why: str) -> str:
    return (
        f"The sandbox refuses to run commands: nothing on this host bounds how many "
        f"processes a command may start (sandbox.limits.processes): {why}. Give the gateway "
        "a writable pids cgroup, run it as an unprivileged user, or make the per-sandbox host "
        "uid work (sandbox.limits.host_uid_base); `pronghorn doctor` tells which is missing."
    )


def _seccomp_program(config: SandboxConfig) -> tuple[bytes | None, str]:
    if not config.limits.seccomp:
        return None, "sandbox.limits.seccomp is off"
    arch = seccomp.host_arch()
    if arch is None:
        return None, "no filter for this CPU architecture (x86_64 and aarch64 only)"
    return seccomp.compile_filter(arch), f"{arch}, {len(seccomp.DENIED)} calls denied"


def limits_report(
    config: SandboxConfig, isolation: Isolation | None, enforcement: Enforcement
) -> dict[str, object]:
    """Each limit with its value and the mechanism that enforces it (None: not enforced)."""
    cfg = config.limits
    cg = enforcement.cgroups

    def via(value: float, controller: str | None, rlimit: str | None) -> dict[str, object]:
        if not value:
            return {"value": value, "enforced_by": None}
        if controller and cg.has(controller):
            return {"value": value, "enforced_by": f"cgroup v{cg.version}"}
        return {"value": value, "enforced_by": rlimit}

    nproc = "rlimit" if enforcement.nproc_counts else None
    if enforcement.host_ids is not None:
        nproc = "rlimit, a host uid per sandbox"
    return {
        "refusal": enforcement.refusal,
        "isolation": isolation,
        "seccomp": enforcement.seccomp_program is not None,
        "seccomp_detail": enforcement.seccomp_reason,
        "cgroup": cg.version,
        "cgroup_detail": cg.reason,
        "processes": via(cfg.processes, "pids", nproc),
        "memory_bytes": via(cfg.memory_bytes, "memory", "rlimit"),
        "cpu_seconds": via(cfg.cpu_seconds, None, "rlimit"),
        "cpu_cores": via(cfg.cpu_cores, "cpu", None),
        "file_size_bytes": via(cfg.file_size_bytes, None, "rlimit"),
        "workspace_quota_bytes": via(cfg.workspace_quota_bytes, None, "watchdog"),
        "tmp_bytes": via(cfg.tmp_bytes, None, "tmpfs" if isolation == "bwrap" else None),
    }
