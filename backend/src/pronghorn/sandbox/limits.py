"""Per-command resource limits: the rlimits a command starts with, and the words that tell
the model which limit stopped it.

rlimits are set by a small bash prologue *inside* the sandbox, after bubblewrap created
the command's user namespace, then the command itself is exec'd. Set there, the kernel
counts ``RLIMIT_NPROC`` per sandbox (its user namespace and uid), not across every process
of the gateway's user — but it is ignored for host uid 0 (bwrap started by root maps the
sandbox uid to root), so as root a cgroup's ``pids.max`` holds, else a host uid per sandbox
(``hostuid.py``), else commands are refused. Hard and soft limits are equal except CPU
time (SIGXCPU first, SIGKILL 5 s later); the command cannot raise them (no capabilities).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from pronghorn.config.schema.app import SandboxLimitsConfig

CPU_GRACE_S = 5


def human_bytes(value: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= size:
            amount = value / size
            return f"{amount:.1f} {unit}" if amount % 1 else f"{int(amount)} {unit}"
    return f"{value} bytes"


@dataclass(frozen=True, slots=True)
class CommandLimits:
    """The limits one command runs with; ``None`` means not limited that way."""

    nproc: int | None
    address_space: int | None
    cpu_seconds: int | None
    file_size: int | None
    # Why file_size is what it is: "file" (the configured cap) or "quota" (what is left of
    # the workspace quota is smaller).
    file_size_reason: str = "file"

    def prologue(self) -> str:
        """bash that sets the limits, then runs ``"$1"`` with bash (exec, same pid).

        ``ulimit`` without ``-H``/``-S`` sets both; CPU time then lowers the soft one.
        """
        opts = ["-c 0"]
        if self.nproc is not None:
            opts.append(f"-u {self.nproc}")
        if self.address_space is not None:
            opts.append(f"-v {max(self.address_space // 1024, 1)}")
        if self.file_size is not None:
            opts.append(f"-f {self.file_size // 1024}")  # bash counts 1024-byte blocks
        soft = ""
        if self.cpu_seconds is not None:
            opts.append(f"-t {self.cpu_seconds + CPU_GRACE_S}")
            soft = f" && ulimit -S -t {self.cpu_seconds}"
        return (
            f"{{ ulimit {' '.join(opts)}{soft}; }} || "
            "{ echo 'sandbox: cannot set resource limits' >&2; exit 126; }; "
            'exec /bin/bash -c "$1"'
        )

    def wrap(self, command: str) -> list[str]:
        """argv (inside the sandbox) that applies the limits and runs ``command``."""
        return ["/bin/bash", "-c", self.prologue(), "pronghorn-limits", command]

    def describe(self) -> dict[str, int | None]:
        return {
            "processes": self.nproc,
            "address_space_bytes": self.address_space,
            "cpu_seconds": self.cpu_seconds,
            "file_size_bytes": self.file_size,
        }


def plan_limits(
    config: SandboxLimitsConfig,
    *,
    quota_left: int | None,
    cgroup_pids: bool,
    cgroup_memory: bool,
    nproc_counts: bool,
) -> CommandLimits:
    """The rlimits for one command. A cgroup that already bounds processes or memory makes
    the matching rlimit unnecessary (and RLIMIT_AS would wrongly count reserved address
    space). ``nproc_counts`` is False where RLIMIT_NPROC would not be per sandbox."""
    nproc = config.processes or None
    if cgroup_pids or not nproc_counts:
        nproc = None
    address_space = None if cgroup_memory else (config.memory_bytes or None)
    file_size = config.file_size_bytes or None
    reason = "file"
    if quota_left is not None and (file_size is None or quota_left < file_size):
        file_size = max(quota_left, 0)
        reason = "quota"
    return CommandLimits(
        nproc=nproc,
        address_space=address_space,
        cpu_seconds=config.cpu_seconds or None,
        file_size=file_size,
        file_size_reason=reason,
    )


@dataclass(frozen=True, slots=True)
class CgroupEvents:
    """What a command's cgroup saw: times the pids limit refused a fork, OOM kills."""

    pids_max_hits: int = 0
    oom_kills: int = 0


_FORK_FAILED = ("fork: retry: Resource temporarily unavailable", "fork: Resource temporarily")
_NO_MEMORY = (
    "MemoryError",
    "Cannot allocate memory",
    "std::bad_alloc",
    "out of memory",
    "Out of memory",
    "memory exhausted",
)


def _signal_of(exit_code: int) -> int | None:
    if exit_code < 0:
        return -exit_code
    if exit_code > 128:
        return exit_code - 128
    return None


def limit_notes(
    limits: CommandLimits,
    config: SandboxLimitsConfig,
    *,
    exit_code: int,
    stderr: str,
    events: CgroupEvents,
) -> list[tuple[str, str]]:
    """(limit, sentence for the model) for each limit the command ran into. The limit is
    one of ``processes``, ``memory``, ``cpu``, ``file_size``, ``quota``."""
    notes: list[tuple[str, str]] = []
    sig = _signal_of(exit_code)
    fork_failed = limits.nproc is not None and any(s in stderr for s in _FORK_FAILED)
    if events.pids_max_hits or fork_failed:
        notes.append(
            (
                "processes",
                f"process limit reached: a command may run at most {config.processes} "
                "processes (sandbox.limits.processes); new processes were refused",
            )
        )
    if events.oom_kills:
        notes.append(
            (
                "memory",
                f"memory limit reached: the command used more than "
                f"{human_bytes(config.memory_bytes)} (sandbox.limits.memory_bytes) and was "
                "killed",
            )
        )
    elif limits.address_space is not None and any(s in stderr for s in _NO_MEMORY):
        notes.append(
            (
                "memory",
                f"memory limit reached: each process may use at most "
                f"{human_bytes(limits.address_space)} of memory (sandbox.limits.memory_bytes)",
            )
        )
    if limits.cpu_seconds is not None and (
        sig == signal.SIGXCPU or "CPU time limit exceeded" in stderr
    ):
        notes.append(
            (
                "cpu",
                f"CPU time limit reached: a process may use {limits.cpu_seconds} s of CPU "
                "(sandbox.limits.cpu_seconds) and was killed",
            )
        )
    if limits.file_size is not None and (
        sig == signal.SIGXFSZ or "File size limit exceeded" in stderr
    ):
        if limits.file_size_reason == "quota":
            notes.append(
                (
                    "quota",
                    f"workspace quota: only {human_bytes(limits.file_size)} of the "
                    f"{human_bytes(config.workspace_quota_bytes)} quota "
                    "(sandbox.limits.workspace_quota_bytes) was left, so no file may grow "
                    "past that; the write was stopped. Delete files to free space",
                )
            )
        else:
            notes.append(
                (
                    "file_size",
                    f"file size limit reached: no file may be larger than "
                    f"{human_bytes(limits.file_size)} (sandbox.limits.file_size_bytes); the "
                    "write was stopped",
                )
            )
    return notes
