"""A Docker engine for the container tests: use the one running, else install Debian's
`docker.io` (and `docker-compose`) when missing and start `dockerd` — stopping, at the end,
only a daemon started here.

Reasons an engine cannot be had (not root, no apt, the daemon does not come up) are
collected in `EngineUnavailable`, which the tests turn into one skip message."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# The Debian CLI matches the Debian engine and speaks BuildKit without the buildx plugin
# (a newer static CLI, as some hosts have in /usr/local/bin, wants buildx for it).
DEBIAN_DOCKER = Path("/usr/bin/docker")
APT = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "-qq"]
START_TIMEOUT_S = 60.0


class EngineUnavailable(Exception):
    """No Docker engine can run here; the message says why."""


@dataclass
class Engine:
    docker: str
    compose: str
    # The daemon this process started (None: one was already running).
    daemon: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        if self.daemon is None or self.daemon.poll() is not None:
            return
        self.daemon.terminate()
        try:
            self.daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait(timeout=30)


def _docker_cli() -> str | None:
    if DEBIAN_DOCKER.exists():
        return str(DEBIAN_DOCKER)
    return shutil.which("docker")


def _answers(docker: str) -> bool:
    try:
        done = subprocess.run(
            [docker, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _apt_install(*packages: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*APT, "install", "-y", "--no-install-recommends", *packages]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode == 0:
        return
    subprocess.run([*APT, "update"], env=env, capture_output=True, check=False)
    done = subprocess.run(install, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        what = " ".join(packages)
        raise EngineUnavailable(f"apt-get install {what} failed: {done.stderr[-500:]}")


def _install_missing() -> None:
    missing = [
        pkg
        for pkg, cmd in (("docker.io", "dockerd"), ("docker-compose", "docker-compose"))
        if shutil.which(cmd) is None
    ]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise EngineUnavailable(
            f"{', '.join(missing)} missing and cannot be installed here (needs root and apt-get)"
        )
    _apt_install(*missing)


def ensure_engine(log_dir: Path) -> Engine:
    """The engine to use, started (and installed) when needed."""
    _install_missing()
    docker = _docker_cli()
    compose = shutil.which("docker-compose")
    if docker is None or compose is None:
        raise EngineUnavailable("no docker CLI or docker-compose after installing them")
    if _answers(docker):
        return Engine(docker=docker, compose=compose)
    if os.geteuid() != 0:
        raise EngineUnavailable("no Docker engine answers and starting dockerd needs root")
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise EngineUnavailable("dockerd is not installed")
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / "dockerd.log"
    with log.open("ab") as out:
        # No iptables (this host may not allow it); the default bridge stays, so user-defined
        # compose networks resolve service names. Tests reach containers through ports
        # published on 127.0.0.1 only (docker-proxy).
        daemon = subprocess.Popen(
            [dockerd, "--iptables=false"], stdout=out, stderr=subprocess.STDOUT
        )
    engine = Engine(docker=docker, compose=compose, daemon=daemon)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _answers(docker):
        if daemon.poll() is not None or time.monotonic() > deadline:
            engine.stop()
            tail = log.read_text(errors="replace")[-800:]
            raise EngineUnavailable(f"dockerd did not start: {tail}")
        time.sleep(0.5)
    return engine
