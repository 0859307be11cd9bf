"""The Docker engine and the two CLIs the compose tests drive: the engine is the one
`support/docker_engine.py` starts for every container test (the one running, else Debian's
`docker.io` installed and `dockerd` started, stopped by `make test` at its end); this adds
`docker-compose` (Debian's v1), installed when missing.

Reasons an engine cannot be had (not root, no apt, the daemon does not come up) are
collected in `EngineUnavailable`, which the tests turn into one skip message."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from support.docker_engine import EngineUnavailable, apt_install, running_engine

__all__ = ["Engine", "EngineUnavailable", "ensure_engine"]

# The Debian CLI matches the Debian engine and speaks BuildKit without the buildx plugin
# (a newer static CLI, as some hosts have in /usr/local/bin, wants buildx for it).
DEBIAN_DOCKER = Path("/usr/bin/docker")


@dataclass(frozen=True, slots=True)
class Engine:
    docker: str
    compose: str


def _docker_cli() -> str | None:
    if DEBIAN_DOCKER.exists():
        return str(DEBIAN_DOCKER)
    return shutil.which("docker")


def ensure_engine() -> Engine:
    """The engine to use, started (and installed) when needed, with both CLIs."""
    missing = [
        pkg
        for pkg, cmd in (("docker.io", "dockerd"), ("docker-compose", "docker-compose"))
        if shutil.which(cmd) is None
    ]
    if missing:
        apt_install(*missing)
    running_engine()
    docker = _docker_cli()
    compose = shutil.which("docker-compose")
    if docker is None or compose is None:
        raise EngineUnavailable("no docker CLI or docker-compose after installing them")
    return Engine(docker=docker, compose=compose)
