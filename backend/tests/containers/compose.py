"""One compose project of the real `docker/docker-compose.yaml`, run with Debian's
`docker-compose` from the `docker/` folder (where the file's relative paths — the seccomp
profile, nginx configs — resolve), under a project and volume prefix of its own so it never
touches an operator's `pronghorn` project. Ports are published on 127.0.0.1 only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from containers.engine import Engine
from containers.images import REPO

DOCKER_DIR = REPO / "docker"
COMPOSE_FILE = DOCKER_DIR / "docker-compose.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what: str, check: Callable[[], bool], timeout: float, every: float = 0.5) -> None:
    """Poll `check` (a container's state has no push notification we can wait on)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


@dataclass
class Stack:
    engine: Engine
    project: str
    workdir: Path
    profiles: list[str]
    # Interpolation variables (images, ports, config and env file paths): they take
    # precedence over the --env-file copy of docker/.env.example.
    variables: dict[str, str] = field(default_factory=dict)

    @property
    def env_file(self) -> Path:
        return self.workdir / "compose.env"

    def run(
        self, *args: str, check: bool = True, timeout: float = 900
    ) -> subprocess.CompletedProcess[str]:
        cmd = [self.engine.compose, "-p", self.project, "--env-file", str(self.env_file)]
        cmd += ["-f", str(COMPOSE_FILE)]
        for profile in self.profiles:
            cmd += ["--profile", profile]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/root"),
            **self.variables,
        }
        if "DOCKER_HOST" in os.environ:
            env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
        done = subprocess.run(
            [*cmd, *args],
            cwd=DOCKER_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"docker-compose {' '.join(args)} failed ({done.returncode}):\n"
                f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
            )
        return done

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.engine.docker, *args], capture_output=True, text=True, timeout=300, check=False
        )
        if check and done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)} failed: {done.stderr[-2000:]}")
        return done

    def up(self, *extra: str) -> None:
        try:
            self.run("up", "-d", "--no-build", *extra)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- logs ---\n{self.logs()[-8000:]}") from None

    def down(self, *extra: str) -> None:
        self.run("down", "--timeout", "30", *extra)

    def containers(self, service: str) -> list[str]:
        """Ids of the service's running containers, in compose's index order."""
        ids = self.run("ps", "-q", service).stdout.split()
        states = [self.inspect(cid) for cid in ids]
        running = [s for s in states if s["State"]["Running"]]
        number = "com.docker.compose.container-number"
        running.sort(key=lambda s: int(s["Config"]["Labels"][number]))
        return [s["Id"] for s in running]

    def inspect(self, container: str) -> dict[str, Any]:
        return json.loads(self.docker("inspect", container).stdout)[0]

    def health(self, container: str) -> str:
        state = self.inspect(container)["State"]
        return state.get("Health", {}).get("Status", "none")

    def wait_healthy(self, service: str, count: int = 1, timeout: float = 240) -> list[str]:
        """Wait until `count` containers of the service report healthy; their ids."""

        def ready() -> bool:
            ids = self.containers(service)
            return len(ids) >= count and all(self.health(c) == "healthy" for c in ids)

        try:
            wait_until(f"{count} healthy {service}", ready, timeout, every=1.0)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.logs(service)[-4000:]}") from None
        return self.containers(service)

    def exec(self, container: str, *cmd: str) -> subprocess.CompletedProcess[str]:
        return self.docker("exec", container, *cmd, check=False)

    def logs(self, *services: str) -> str:
        done = self.run("logs", "--no-color", *services, check=False)
        return done.stdout + done.stderr
