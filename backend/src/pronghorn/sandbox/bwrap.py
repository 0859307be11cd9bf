"""bubblewrap (``bwrap``) command line for one thread, and the start-up probe.

Inside the sandbox the command sees: read-only system folders (/usr, /bin, /lib*, /sbin and
a short allow-list of /etc files — never /etc/shadow, the config file, the repo, the data
dir of other threads or the gateway's home), the thread's three folders writable at
``/mnt/user-data/{workspace,uploads,outputs}``, a private /tmp, its own /proc and /dev,
every namespace unshared (so no network unless ``network=True``), no capabilities, an
unprivileged uid, a seccomp filter (``seccomp.py``) and resource limits (``limits.py``).
The sandboxed process dies with the gateway (``--die-with-parent``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pronghorn.sandbox.limits import CommandLimits
from pronghorn.sandbox.mounts import ReadOnlyMount
from pronghorn.sandbox.paths import FOLDERS, VIRTUAL_ROOT, VIRTUAL_WORKSPACE, ThreadPaths
from pronghorn.sandbox.seccomp import filter_fd

SANDBOX_UID = 1000
SANDBOX_GID = 1000

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# /etc entries programs commonly need. Anything else in /etc (shadow, gshadow, ssh keys,
# the gateway's own config, credentials of other services) stays invisible.
ETC_ALLOWLIST = (
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "fonts",
    "group",
    "host.conf",
    "hostname",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "profile",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
    "timezone",
    "python3",
    "python3.11",
    "python3.12",
    "python3.13",
)

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def system_args() -> list[str]:
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    args += ["--dir", "/etc"]
    for name in ETC_ALLOWLIST:
        src = f"/etc/{name}"
        if os.path.lexists(src):
            # --ro-bind-try: a dangling symlink (e.g. resolv.conf managed elsewhere) is skipped.
            args += ["--ro-bind-try", src, src]
    return args


def build_parts(
    bwrap: str,
    paths: ThreadPaths,
    command: str,
    *,
    network: bool,
    env: dict[str, str],
    limits: CommandLimits | None = None,
    seccomp_fd: int | None = None,
    tmp_bytes: int | None = None,
    ro_mounts: Sequence[ReadOnlyMount] = (),
) -> tuple[list[str], list[str]]:
    """(bwrap options, argv inside the sandbox) that run ``/bin/bash -c command`` for this
    thread.

    ``limits``: rlimits set inside the sandbox before the command runs; ``seccomp_fd``: a
    descriptor holding the compiled filter (passed to the child with ``pass_fds``);
    ``tmp_bytes``: the size of the private /tmp; ``ro_mounts``: host folders bound read-only
    (skills at /mnt/skills/...).
    """
    args = ["--unshare-all"]
    if network:
        args.append("--share-net")
    args += [
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        *system_args(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        *(["--size", str(tmp_bytes)] if tmp_bytes else []),
        "--tmpfs",
        "/tmp",
        "--dir",
        "/mnt",
        "--dir",
        VIRTUAL_ROOT,
    ]
    for folder in FOLDERS:
        args += ["--bind", str(getattr(paths, folder)), f"{VIRTUAL_ROOT}/{folder}"]
    made: set[str] = {"/mnt", VIRTUAL_ROOT}
    for mount in ro_mounts:
        parents: list[str] = []
        parent = posixpath.dirname(mount.virtual)
        while parent not in made and parent != "/":
            parents.insert(0, parent)
            parent = posixpath.dirname(parent)
        for folder in parents:
            args += ["--dir", folder]
            made.add(folder)
        args += ["--ro-bind", str(mount.host), mount.virtual]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", VIRTUAL_WORKSPACE]
    inner = limits.wrap(command) if limits is not None else ["/bin/bash", "-c", command]
    return args, inner


def build_argv(
    bwrap: str,
    paths: ThreadPaths,
    command: str,
    *,
    network: bool,
    env: dict[str, str],
    limits: CommandLimits | None = None,
    seccomp_fd: int | None = None,
    tmp_bytes: int | None = None,
    ro_mounts: Sequence[ReadOnlyMount] = (),
) -> list[str]:
    """The whole bwrap command line (options in argv). Commands are started with
    :func:`hidden_argv` instead, so the sandbox cannot read the options back."""
    options, inner = build_parts(
        bwrap,
        paths,
        command,
        network=network,
        env=env,
        limits=limits,
        seccomp_fd=seccomp_fd,
        tmp_bytes=tmp_bytes,
        ro_mounts=ro_mounts,
    )
    return [bwrap, *options, *inner]


def hidden_argv(bwrap: str, options: list[str], inner: list[str]) -> tuple[list[str], int]:
    """(argv, descriptor): bwrap reads its options from the descriptor (``--args``), a
    memfd the caller passes to the child and closes afterwards.

    Inside the sandbox, pid 1 is bwrap's own reaper and ``/proc/1/cmdline`` is bwrap's
    argv: with the options in a descriptor it shows ``bwrap --args N`` and the command, never
    the host folders bound in (the data dir, the owner's id) or the environment given.
    """
    fd = os.memfd_create("pronghorn-bwrap-args", os.MFD_CLOEXEC)
    try:
        blob = b"".join(arg.encode() + b"\0" for arg in options)
        view = memoryview(blob)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return [bwrap, "--args", str(fd), *inner], fd


async def probe(
    bwrap: str,
    *,
    network: bool,
    seccomp_program: bytes | None = None,
    tmp_bytes: int | None = None,
    timeout_s: float = 15.0,
    paths: ThreadPaths | None = None,
    prefix: Sequence[str] = (),
) -> tuple[bool, str]:
    """Run ``true`` under the exact options real commands use; (works, reason).

    ``paths``: the folders to bind (default: fresh ones in a temporary folder);
    ``prefix``: what starts bwrap (e.g. the switch to a per-sandbox host uid)."""
    with tempfile.TemporaryDirectory(prefix="pronghorn-bwrap-probe-") as tmp:
        if paths is None:
            paths = ThreadPaths(
                user_id="probe",
                thread_id="00000000-0000-0000-0000-000000000000",
                root=Path(tmp),
                workspace=Path(tmp) / "workspace",
                uploads=Path(tmp) / "uploads",
                outputs=Path(tmp) / "outputs",
            )
        await asyncio.to_thread(paths.ensure)
        fd = filter_fd(seccomp_program) if seccomp_program is not None else None
        options, inner = build_parts(
            bwrap,
            paths,
            "true",
            network=network,
            env={"PATH": SANDBOX_PATH},
            seccomp_fd=fd,
            tmp_bytes=tmp_bytes,
        )
        argv, args_fd = hidden_argv(bwrap, options, inner)
        fds = (args_fd,) if fd is None else (args_fd, fd)
        try:
            proc = await asyncio.create_subprocess_exec(
                *prefix,
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                pass_fds=fds,
            )
        except OSError as exc:
            return False, f"cannot start bwrap: {exc}"
        finally:
            for one in fds:
                os.close(one)
        try:
            _, err = await asyncio.wait_for(proc.communicate(), timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            return False, "bwrap probe timed out"
        if proc.returncode != 0:
            reason = err.decode("utf-8", "replace").strip()[:500]
            return False, f"bwrap exited with {proc.returncode}: {reason}"
        return True, "ok"
