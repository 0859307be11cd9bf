"""A cgroup per command, where this process may create them.

``detect()`` runs once when the provider starts and finds, for each controller Pronghorn
uses (``pids``, ``memory``, ``cpu``), a folder this process may create child cgroups in:

- **cgroup v2** (``/sys/fs/cgroup`` is cgroup2): our own cgroup, when it is writable and
  offers the controllers (a delegated subtree: systemd ``Delegate=yes``, a container with
  a writable cgroup namespace). As v2 forbids processes in a cgroup that hands controllers
  to children, the gateway's processes are first moved into a leaf ``pronghorn-gateway``
  child, then the controllers are enabled for the subtree.
- **cgroup v1**: each controller's own hierarchy (``/sys/fs/cgroup/<controller>``), where
  our cgroup of that controller is writable (typically when running as root).

Each command then gets ``pronghorn-cmd-<id>`` with ``pids.max``, the memory limit (swap
off) and ``cpu.max`` (v1: the equivalent files); the command enters it before it runs
anything (:meth:`CommandCgroup.join_argv`), so every process it starts is counted. After
the command everything left in it is killed and the folder removed. Every function here
blocks: call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from pronghorn.sandbox.limits import CgroupEvents

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("pids", "memory", "cpu")
CPU_PERIOD_US = 100_000
GATEWAY_LEAF = "pronghorn-gateway"
PREFIX = "pronghorn-cmd-"


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    """Where command cgroups are created, per controller (empty: no cgroups)."""

    version: int | None
    parents: dict[str, Path] = field(default_factory=dict)
    reason: str = ""

    def has(self, controller: str) -> bool:
        return controller in self.parents


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """controller name (or "" for v2) -> our path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, names, path = parts
        for name in names.split(",") if names else [""]:
            out[name] = path
    return out


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def detect(root: Path = CGROUP_ROOT, *, delegate: bool = True) -> CgroupSupport:
    """Where command cgroups can be made. ``delegate=False`` only looks: on cgroup v2 it
    reports what a start would set up without moving any process (for ``doctor``)."""
    try:
        own = _own_paths(Path("/proc/self/cgroup").read_text())
    except OSError as exc:
        return CgroupSupport(None, reason=f"cannot read /proc/self/cgroup: {exc}")
    if (root / "cgroup.controllers").exists():
        return _detect_v2(root, own.get("", "/"), delegate=delegate)
    parents: dict[str, Path] = {}
    for controller in CONTROLLERS:
        base = root / controller
        path = base / own.get(controller, "/").lstrip("/")
        if (base / "cgroup.procs").exists() and _writable(path):
            parents[controller] = path
    if not parents:
        return CgroupSupport(None, reason="no writable cgroup (v1) for pids, memory or cpu")
    return CgroupSupport(1, parents, reason="cgroup v1 hierarchies are writable")


def _detect_v2(root: Path, own: str, *, delegate: bool = True) -> CgroupSupport:
    here = root / own.lstrip("/")
    if here.name == GATEWAY_LEAF:  # already moved by an earlier start of this process
        here = here.parent
    if not _writable(here):
        return CgroupSupport(None, reason=f"cgroup v2: {here} is not writable (not delegated)")
    try:
        available = (here / "cgroup.controllers").read_text().split()
        wanted = [c for c in CONTROLLERS if c in available]
        if "pids" not in wanted and "memory" not in wanted:
            return CgroupSupport(
                None, reason=f"cgroup v2: {here} offers neither pids nor memory ({available})"
            )
        enabled = (here / "cgroup.subtree_control").read_text().split()
        missing = [c for c in wanted if c not in enabled]
        if missing and not delegate:
            return CgroupSupport(2, dict.fromkeys(wanted, here), reason=f"cgroup v2 at {here}")
        if missing:
            _move_into_leaf(here)
            (here / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))
    except OSError as exc:
        return CgroupSupport(None, reason=f"cgroup v2: cannot delegate {here}: {exc}")
    return CgroupSupport(2, dict.fromkeys(wanted, here), reason=f"cgroup v2 at {here}")


def _move_into_leaf(here: Path) -> None:
    leaf = here / GATEWAY_LEAF
    leaf.mkdir(exist_ok=True)
    for _ in range(3):  # processes may fork while we move them
        pids = (here / "cgroup.procs").read_text().split()
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                (leaf / "cgroup.procs").write_text(pid)
    if (here / "cgroup.procs").read_text().split():
        raise OSError("processes keep appearing in the gateway's cgroup")


def _write(path: Path, value: str) -> None:
    path.write_text(value)


@dataclass(slots=True)
class CommandCgroup:
    """One command's cgroup (one folder per controller on v1, one folder on v2)."""

    version: int
    folders: dict[str, Path]

    def join_argv(self, argv: list[str]) -> list[str]:
        """``argv`` preceded by a tiny /bin/sh that moves itself into the cgroup, then execs
        ``argv``: nothing of the command runs outside it."""
        procs = sorted({str(folder / "cgroup.procs") for folder in self.folders.values()})
        script = (
            'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; '
            'n=$((n - 1)); done; exec "$@"'
        )
        return ["/bin/sh", "-c", script, "pronghorn-cgroup", str(len(procs)), *procs, *argv]

    def events(self) -> CgroupEvents:
        pids = memory = 0
        if "pids" in self.folders:
            pids = _read_key(self.folders["pids"] / "pids.events", "max")
        if "memory" in self.folders:
            name = "memory.events" if self.version == 2 else "memory.oom_control"
            memory = _read_key(self.folders["memory"] / name, "oom_kill")
        return CgroupEvents(pids_max_hits=pids, oom_kills=memory)

    def remove(self, timeout_s: float = 5.0) -> bool:
        """Kill whatever is left in the cgroup and delete it; False if it could not be."""
        deadline = time.monotonic() + timeout_s
        remaining = set(self.folders.values())
        while remaining:
            for folder in list(remaining):
                _kill_all(folder, self.version)
                try:
                    folder.rmdir()
                    remaining.discard(folder)
                except FileNotFoundError:
                    remaining.discard(folder)
                except OSError:
                    pass
            if not remaining:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True


def _read_key(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _kill_all(folder: Path, version: int) -> None:
    if version == 2 and (folder / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (folder / "cgroup.kill").write_text("1")
        return
    try:
        pids = (folder / "cgroup.procs").read_text().split()
    except OSError:
        return
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def create(
    support: CgroupSupport, *, pids_max: int, memory_max: int, cpu_cores: float
) -> CommandCgroup:
    """A new command cgroup with the limits written (0 leaves a limit off). Raises OSError."""
    name = f"{PREFIX}{uuid.uuid4().hex}"
    assert support.version is not None
    folders: dict[str, Path] = {}
    cgroup = CommandCgroup(support.version, folders)
    try:
        for controller, parent in support.parents.items():
            folder = parent / name
            if folder not in folders.values():
                folder.mkdir()
            folders[controller] = folder
        if "pids" in folders and pids_max:
            _write(folders["pids"] / "pids.max", str(pids_max))
        if "memory" in folders and memory_max:
            _set_memory(folders["memory"], support.version, memory_max)
        if "cpu" in folders and cpu_cores:
            quota = max(int(cpu_cores * CPU_PERIOD_US), 1000)
            if support.version == 2:
                _write(folders["cpu"] / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:
                _write(folders["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                _write(folders["cpu"] / "cpu.cfs_quota_us", str(quota))
    except OSError:
        cgroup.remove(timeout_s=1.0)
        raise
    return cgroup


def _set_memory(folder: Path, version: int, limit: int) -> None:
    if version == 2:
        _write(folder / "memory.max", str(limit))
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")
        return
    _write(folder / "memory.limit_in_bytes", str(limit))
    if (folder / "memory.memsw.limit_in_bytes").exists():
        _write(folder / "memory.memsw.limit_in_bytes", str(limit))
