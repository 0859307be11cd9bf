"""What a sandbox container is made of: the Docker Engine API body that creates it, and the
labels that say whose it is.

Secure by default: a non-root user, every capability dropped, ``no-new-privileges``, a
read-only root filesystem with a size-bounded ``/tmp``, no network unless
``sandbox.network`` is true, CPU, memory, pids and per-file size limits, and only the
thread's (or user's) folders bind-mounted writable — never the engine's socket.
"""

from __future__ import annotations

import hashlib
import json
import stat
from dataclasses import dataclass
from pathlib import Path

from aiodocker.types import JSONValue

from pronghorn.config.schema.app import SandboxConfig
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.mounts import ReadOnlyMount
from pronghorn.sandbox.paths import FOLDERS, VIRTUAL_ROOT, VIRTUAL_WORKSPACE

# Labels on every sandbox container.
LABEL_SANDBOX = "dev.pronghorn.sandbox"
LABEL_INSTANCE = "dev.pronghorn.sandbox.instance"
LABEL_KEY = "dev.pronghorn.sandbox.key"
LABEL_SPEC = "dev.pronghorn.sandbox.spec"
LABEL_USER = "dev.pronghorn.sandbox.user"
LABEL_THREAD = "dev.pronghorn.sandbox.thread"

# Where a user-scope container sees the user's threads (one folder per thread id).
USER_THREADS = "/mnt/threads"

Json = dict[str, JSONValue]


@dataclass(frozen=True, slots=True)
class Bind:
    host: Path
    target: str
    read_only: bool


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    """Everything that decides a container's shape; equal specs make equal containers."""

    key: str  # "t:<user>/<thread>" or "u:<user>"
    user_id: str
    thread_id: str  # "" for a user-scope container
    run_as: str  # "uid:gid"
    binds: tuple[Bind, ...]
    workdir: str

    def digest(self, config: SandboxConfig) -> str:
        """Hash of the spec and the settings that shape the container."""
        shape = {
            "binds": [[str(b.host), b.target, b.read_only] for b in self.binds],
            "run_as": self.run_as,
            "image": config.container.image,
            "network": config.network,
            "network_name": config.container.network_name,
            "limits": config.limits.model_dump(mode="json"),
        }
        text = json.dumps(shape, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def thread_binds(root: Path, mounts: tuple[ReadOnlyMount, ...]) -> tuple[Bind, ...]:
    """A thread's three folders at /mnt/user-data/..., then read-only mounts (skills)."""
    own = tuple(Bind(root / name, f"{VIRTUAL_ROOT}/{name}", False) for name in FOLDERS)
    return own + tuple(Bind(m.host, m.virtual, True) for m in mounts)


def user_binds(threads: Path, mounts: tuple[ReadOnlyMount, ...]) -> tuple[Bind, ...]:
    """A user's threads folder at /mnt/threads, then read-only mounts (skills)."""
    ro = tuple(Bind(m.host, m.virtual, True) for m in mounts)
    return (Bind(threads, USER_THREADS, False), *ro)


def check_bind(bind: Bind) -> None:
    """Refuse to mount anything that is not a plain folder (a socket such as the engine's
    own, a device, a link)."""
    try:
        info = bind.host.lstat()
    except OSError as exc:
        raise SandboxError(f"cannot mount {bind.target}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise SandboxError(f"cannot mount {bind.target}: only folders are mounted")


def labels(spec: ContainerSpec, config: SandboxConfig) -> dict[str, str]:
    return {
        LABEL_SANDBOX: "1",
        LABEL_INSTANCE: config.container.instance,
        LABEL_KEY: spec.key,
        LABEL_SPEC: spec.digest(config),
        LABEL_USER: spec.user_id,
        LABEL_THREAD: spec.thread_id,
    }


def sandbox_env() -> dict[str, str]:
    """The whole environment of a command (nothing of the gateway's own)."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": VIRTUAL_WORKSPACE,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": "/tmp",
    }


def create_body(spec: ContainerSpec, config: SandboxConfig) -> Json:
    """The body of ``POST /containers/create``."""
    limits = config.limits
    host: Json = {
        "Binds": None,
        "Mounts": [
            {"Type": "bind", "Source": str(b.host), "Target": b.target, "ReadOnly": b.read_only}
            for b in spec.binds
        ],
        "NetworkMode": config.container.network_name if config.network else "none",
        "ReadonlyRootfs": True,
        "CapDrop": ["ALL"],
        "SecurityOpt": ["no-new-privileges:true"],
        "Init": True,
        "Privileged": False,
        "IpcMode": "private",
        "Tmpfs": {"/tmp": f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=1777"},
        "RestartPolicy": {"Name": "no"},
        "AutoRemove": False,
    }
    ulimits: list[JSONValue] = []
    if limits.file_size_bytes:
        ulimits.append(
            {"Name": "fsize", "Soft": limits.file_size_bytes, "Hard": limits.file_size_bytes}
        )
    if limits.cpu_seconds:
        ulimits.append({"Name": "cpu", "Soft": limits.cpu_seconds, "Hard": limits.cpu_seconds})
    if ulimits:
        host["Ulimits"] = ulimits
    if limits.memory_bytes:
        host["Memory"] = limits.memory_bytes
        host["MemorySwap"] = limits.memory_bytes  # no swap on top
    if limits.cpu_cores:
        host["NanoCpus"] = int(limits.cpu_cores * 1e9)
    if limits.processes:
        host["PidsLimit"] = limits.processes
    return {
        "Image": config.container.image,
        "Cmd": ["sleep", "infinity"],
        "Entrypoint": None,
        "User": spec.run_as,
        "WorkingDir": spec.workdir,
        "Env": [f"{k}={v}" for k, v in sandbox_env().items()],
        "Hostname": "sandbox",
        "Labels": labels(spec, config),
        "NetworkDisabled": not config.network,
        "AttachStdin": False,
        "AttachStdout": False,
        "AttachStderr": False,
        "Tty": False,
        "OpenStdin": False,
        "StopSignal": "SIGKILL",
        "HostConfig": host,
    }
