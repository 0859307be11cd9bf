"""A host uid per sandbox, so ``RLIMIT_NPROC`` binds when the gateway runs as root.

The kernel exempts processes of host uid 0 from ``RLIMIT_NPROC``, and bubblewrap started by
root maps the sandbox's uid to root. Where no pids cgroup bounds a command either, a fork
bomb would be bounded by nothing. So, when the gateway is root and has no pids cgroup, each
command starts bubblewrap through ``setpriv`` as a host uid of its own sandbox: ``base + 1 +
(a hash of the thread mod SLOTS)``, gid ``base``, no supplementary groups, no
capabilities. bwrap then runs unprivileged (as it does for a non-root gateway), and the
limits prologue's ``ulimit -u`` holds: the kernel counts the processes of that uid in the
sandbox's own user namespace, so two threads that happen to share a uid still have a budget
each.

The uid must reach and write the thread's folders: before each command the three folders
and everything in them are given to it (``chown``, never following a link, bounded), and
the folders between the data dir and the thread are made searchable (not readable) by the
sandbox group. Folders above the data dir must already be searchable by others (the start-up
probe tells). Every function here blocks: call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from pronghorn.sandbox.paths import FOLDERS, ThreadPaths

SLOTS = 65536
MAX_ENTRIES = 200_000


def find_setpriv() -> str | None:
    return shutil.which("setpriv")


@dataclass(frozen=True, slots=True)
class HostIds:
    """The host uid range of sandboxes (``sandbox.limits.host_uid_base``) and the tool that
    switches to one."""

    base: int
    setpriv: str
    data_dir: Path

    @property
    def gid(self) -> int:
        return self.base

    def uid_for(self, paths: ThreadPaths) -> int:
        key = f"{paths.user_id}/{paths.thread_id}".encode()
        return self.base + 1 + int.from_bytes(hashlib.sha256(key).digest()[:4], "big") % SLOTS

    def prefix(self, uid: int) -> list[str]:
        """argv that runs the rest as ``uid``:``gid`` without groups or capabilities."""
        return [
            self.setpriv,
            f"--reuid={uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ]


def prepare(paths: ThreadPaths, data_dir: Path, uid: int, gid: int) -> None:
    """Make the thread's folders the sandbox uid's, and the way to them searchable by its
    group. Raises OSError (the command must not run then)."""
    _open_the_way(paths.root, data_dir, gid)
    budget = [MAX_ENTRIES]
    for folder in FOLDERS:
        _give_tree(paths.root, folder, uid, gid, budget)


def _open_the_way(root: Path, data_dir: Path, gid: int) -> None:
    """data_dir, every folder below it down to the thread's root, and that root: group
    ``gid``, group may search (not list, not write)."""
    way = [root, *[p for p in root.parents if p == data_dir or data_dir in p.parents]]
    for folder in reversed(way):
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(f"{folder} is not a folder")
        if info.st_gid != gid:
            os.lchown(folder, -1, gid)
        mode = stat.S_IMODE(info.st_mode)
        wanted = (mode & ~0o070) | 0o010
        if mode != wanted:
            os.chmod(folder, wanted)  # a folder (checked above) the sandbox cannot reach


def _give_tree(root: Path, name: str, uid: int, gid: int, budget: list[int]) -> None:
    """chown ``root/name`` and everything in it, through descriptors (``fwalk`` checks
    each folder it enters is the one it listed), never following a link."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.chown(name, uid, gid, dir_fd=root_fd, follow_symlinks=False)
    finally:
        os.close(root_fd)
    for _, dirs, files, dir_fd in os.fwalk(root / name, follow_symlinks=False):
        for entry in (*dirs, *files):
            budget[0] -= 1
            if budget[0] < 0:
                return
            with contextlib.suppress(FileNotFoundError):
                info = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
                if info.st_uid != uid or info.st_gid != gid:
                    os.chown(entry, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
