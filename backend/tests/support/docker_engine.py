"""A real Docker engine for the container tests, and the sandbox image built offline.

:func:`sandbox_engine` (once per machine, under a file lock, so parallel test workers wait
for one another):

1. uses the engine at ``DOCKER_HOST`` / ``/var/run/docker.sock`` when one answers, else, as
   root, installs Debian's ``docker.io`` when ``dockerd`` is missing and starts
   ``dockerd --iptables=false`` in the background (log: ``/tmp/pronghorn-dockerd.log``, pid
   file: :data:`PID_FILE`; :func:`stop_started_engine` stops only an engine started here);
2. builds ``pronghorn-sandbox-base:<hash>``, a Debian bookworm root filesystem made by
   ``debootstrap --variant=minbase`` from the host's Debian mirror and ``docker import``-ed
   (no registry is reachable), unless an image of that tag is there already;
3. builds ``pronghorn-sandbox:<hash>`` from ``docker/sandbox.Dockerfile`` on that base
   (``--network host``), unless there already. Both tags hash their recipe, so a second run
   takes well under a second.

Where no engine can start, :func:`sandbox_engine` raises :class:`EngineUnavailable` with one
sentence saying why; the tests then skip with it (or fail, with
``PRONGHORN_REQUIRE_DOCKER=1``, as CI should set). The docker CLI is used here, in test
set-up only: the provider itself talks to the Engine API.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[3]
SANDBOX_DOCKERFILE = REPO / "docker" / "sandbox.Dockerfile"
PID_FILE = Path("/tmp/pronghorn-dockerd.pid")
LOG_FILE = Path("/tmp/pronghorn-dockerd.log")
LOCK_FILE = Path("/tmp/pronghorn-docker-engine.lock")
SOCKET = Path("/var/run/docker.sock")
SUITE = "bookworm"
BASE_REPO = "pronghorn-sandbox-base"
SANDBOX_REPO = "pronghorn-sandbox"
APT_GET = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "-qq"]


class EngineUnavailable(Exception):
    """No Docker engine can run here; ``str()`` says why in one sentence."""


@dataclass(frozen=True, slots=True)
class Engine:
    url: str  # for aiodocker / sandbox.container.docker_url
    sandbox_image: str  # pronghorn-sandbox:<hash>
    base_image: str


def _run(
    argv: list[str],
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, check=False, env=env, stdin=stdin
    )


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    docker = shutil.which("docker")
    if docker is None:
        raise EngineUnavailable("the docker CLI is not installed")
    return _run([docker, *args], timeout)


def _answers(path: Path) -> bool:
    """The engine's socket accepts a connection and answers GET /_ping."""
    if not path.is_socket():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(str(path))
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return b" 200 " in sock.recv(256)
    except OSError:
        return False


def apt_install(*packages: str) -> None:
    """Install Debian `packages` (an `apt-get update` and a second try when the first fails:
    a fresh machine's package lists may be stale); EngineUnavailable when it cannot."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        what = ", ".join(packages)
        raise EngineUnavailable(f"{what} missing and cannot be installed here (needs root, apt)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*APT_GET, "install", "-y", *packages]
    done = _run(install, 900, env=env)
    if done.returncode != 0:
        _run([*APT_GET, "update"], 300, env=env)
        done = _run(install, 900, env=env)
    if done.returncode != 0:
        raise EngineUnavailable(
            f"apt-get install {' '.join(packages)} failed: {done.stderr.strip()[-300:]}"
        )


def _install_engine() -> None:
    if shutil.which("dockerd") is not None:
        return
    if os.geteuid() != 0:
        raise EngineUnavailable("dockerd is not installed and installing it needs root")
    apt_install("docker.io")
    if shutil.which("dockerd") is None:
        raise EngineUnavailable("apt-get installed docker.io but there is no dockerd")


def _start_engine() -> None:
    if os.geteuid() != 0:
        raise EngineUnavailable("no Docker engine answers and starting dockerd needs root")
    _install_engine()
    dockerd = shutil.which("dockerd")
    assert dockerd is not None
    with LOG_FILE.open("ab") as log:
        proc = subprocess.Popen(
            [dockerd, "--iptables=false"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    PID_FILE.write_text(str(proc.pid))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if _answers(SOCKET):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    tail = LOG_FILE.read_text(errors="replace").strip().splitlines()[-3:]
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    PID_FILE.unlink(missing_ok=True)
    raise EngineUnavailable(f"dockerd did not start: {' | '.join(tail)[-300:]}")


def stop_started_engine() -> bool:
    """Stop the dockerd that :func:`sandbox_engine` started (never another); True if so."""
    try:
        pid = int(PID_FILE.read_text())
    except (OSError, ValueError):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    PID_FILE.unlink(missing_ok=True)
    return True


def _mirror() -> str:
    """The Debian mirror this host's apt uses (debootstrap fetches from it)."""
    sources = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]
    for path in sources:
        with contextlib.suppress(OSError):
            text = path.read_text()
            for match in re.finditer(r"(https?://\S+/debian)(?:\s|$)", text):
                return match.group(1)
    return "http://deb.debian.org/debian"


def _has_image(tag: str) -> bool:
    return _docker("image", "inspect", tag, timeout=30).returncode == 0


def _base_image() -> str:
    mirror = _mirror()
    recipe = f"debootstrap --variant=minbase {SUITE} {mirror}"
    tag = f"{BASE_REPO}:{hashlib.sha256(recipe.encode()).hexdigest()[:16]}"
    if _has_image(tag):
        return tag
    if shutil.which("debootstrap") is None:
        apt_install("debootstrap")
    with tempfile.TemporaryDirectory(prefix="pronghorn-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        done = _run(["debootstrap", "--variant=minbase", SUITE, str(rootfs), mirror], 1200)
        if done.returncode != 0:
            why = (done.stderr.strip() or done.stdout.strip())[-300:]
            raise EngineUnavailable(f"debootstrap failed: {why}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        docker = shutil.which("docker")
        assert docker is not None
        imported = _run([docker, "import", "-", tag], 600, stdin=tar.stdout)
        tar.wait()
        if imported.returncode != 0:
            raise EngineUnavailable(f"docker import failed: {imported.stderr.strip()[-300:]}")
    return tag


def _sandbox_image(base: str) -> str:
    digest = hashlib.sha256(SANDBOX_DOCKERFILE.read_bytes() + base.encode()).hexdigest()[:16]
    tag = f"{SANDBOX_REPO}:{digest}"
    if _has_image(tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="pronghorn-sandbox-ctx-") as ctx:
        done = _docker(
            "build",
            "--network",
            "host",
            "--build-arg",
            f"BASE_IMAGE={base}",
            "-f",
            str(SANDBOX_DOCKERFILE),
            "-t",
            tag,
            ctx,
            timeout=1200,
        )
    if done.returncode != 0:
        raise EngineUnavailable(f"building the sandbox image failed: {done.stderr[-400:]}")
    return tag


def running_engine() -> str:
    """The URL of a Docker engine that answers: ``DOCKER_HOST``'s, else the local socket's,
    starting (and installing) ``dockerd`` when none answers. Under the machine-wide lock, so
    parallel test workers and the container tests start one daemon between them; it runs
    until ``python tests/support/docker_engine.py --stop`` (``make test`` does)."""
    host = os.environ.get("DOCKER_HOST")
    if host:
        return host
    with LOCK_FILE.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _answers(SOCKET):
            _start_engine()
    return f"unix://{SOCKET}"


@functools.cache
def sandbox_engine() -> Engine:
    """The engine and the sandbox image (see the module's doc); cached per process."""
    url = running_engine()
    with LOCK_FILE.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        base = _base_image()
        return Engine(url=url, sandbox_image=_sandbox_image(base), base_image=base)


@functools.cache
def engine_or_reason() -> tuple[Engine | None, str]:
    """(the engine, "") or (None, why not) — for a skip message."""
    try:
        return sandbox_engine(), ""
    except (EngineUnavailable, OSError, subprocess.SubprocessError) as exc:
        return None, f"container tests skipped: no Docker engine can run here ({exc})"


def main() -> int:
    """``python tests/support/docker_engine.py``: prepare the engine and the image before a
    test run (``make test-backend`` does), outside any test's timeout. Exit 1 only when
    ``PRONGHORN_REQUIRE_DOCKER=1`` and no engine can run. ``--stop``: stop the engine a
    previous call started (``make test`` does at its end), never one that was running."""
    if sys.argv[1:] == ["--stop"]:
        if stop_started_engine():
            print("stopped the docker engine started for the tests")
        return 0
    engine, reason = engine_or_reason()
    if engine is None:
        print(reason)
        return 1 if os.environ.get("PRONGHORN_REQUIRE_DOCKER") == "1" else 0
    print(f"docker engine {engine.url}; sandbox image {engine.sandbox_image}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
