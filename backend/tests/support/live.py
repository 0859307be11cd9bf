"""Start a real Pronghorn server (`pronghorn serve`) in a subprocess on a free port."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from support import forkserver

BACKEND_DIR = Path(__file__).resolve().parents[2]
TESTS_DIR = BACKEND_DIR / "tests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    workdir: Path
    config: dict[str, Any]
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    proc: forkserver.Process | None = None
    log_path: Path | None = None
    # False: started without a config file (no --config, none in its work dir); `config`
    # is then ignored and `env` says what differs from the defaults.
    config_file: bool = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api(self) -> str:
        return f"{self.url}/api/langgraph"

    @property
    def config_path(self) -> Path:
        return self.workdir / "config.yaml"

    def write_config(self, config: dict[str, Any] | None = None) -> None:
        if config is not None:
            self.config = config
        self.config_path.write_text(yaml.safe_dump(self.config), encoding="utf-8")

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """`pronghorn ARGS --config <this server's>` in a subprocess (same database)."""
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS_DIR), "HOME": str(self.workdir)}
        return forkserver.run(
            [sys.executable, "-m", "pronghorn.cli", *args, "--config", str(self.config_path)],
            cwd=self.workdir,
            env=env,
            server=forkserver.OWNER.get(server_env()),
            input=stdin,
        )

    def start(self, timeout: float = 120.0) -> LiveServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        if self.config_file:
            self.write_config()
        self.log_path = self.workdir / "server.log"
        base = server_env()
        # The child writes to its own copy of the descriptor; ours is closed at once. It
        # runs in a session of its own: `serve --workers N` forks workers, and stopping or
        # killing the server ends them too (no orphan outlives a test).
        with open(self.log_path, "ab") as log:
            self.proc = forkserver.popen(
                [
                    sys.executable,
                    "-m",
                    "pronghorn.cli",
                    "serve",
                    "--port",
                    str(self.port),
                    *(["--config", str(self.config_path)] if self.config_file else []),
                ],
                cwd=self.workdir,
                env={**base, **self.env},
                server=forkserver.OWNER.get(base),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            self._wait_healthy(timeout)
        except BaseException:
            # Not started (it exited, never answered, or the test timed out meanwhile): no
            # process outlives the attempt (an unreaped Popen is a ResourceWarning later).
            self.kill()
            raise
        return self

    def _wait_healthy(self, timeout: float) -> None:
        """Until `/health` answers 200. A child process has no event to wait on, so its port
        is probed — through one plain-HTTP client: a client per probe would load the CA
        bundle each time (tens of ms, seconds on a loaded machine)."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=1, verify=False) as http:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited early:\n{self.logs()}")
                try:
                    if http.get(f"{self.url}/health").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
        raise RuntimeError(f"server did not start in {timeout}s:\n{self.logs()}")

    def logs(self) -> str:
        if self.log_path and self.log_path.exists():
            return self.log_path.read_text(errors="replace")[-8000:]
        return ""

    def stop(self, timeout: float = 20.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            self._end_group()
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)
        finally:
            self._end_group()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self._end_group()

    def _end_group(self) -> None:
        """SIGKILL whatever is left of the server's process group (workers of a supervisor
        that was killed, or that exited without them)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)


def server_env() -> dict[str, str]:
    """The environment a server subprocess starts from: this process's, without its
    PRONGHORN_* settings, with the tests' import path and the bytecode cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRONGHORN_")}
    return {**env, "PYTHONPATH": str(TESTS_DIR), **child_bytecode_env()}


def child_bytecode_env() -> dict[str, str]:
    """Bytecode caching for server subprocesses, kept out of the source tree.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on CI) every child compiles the gateway and its
    dependencies from source again: tens of seconds of CPU per ``pronghorn serve`` on a
    loaded machine. A cache under the temp dir (``PYTHONPYCACHEPREFIX``) lets the first
    child compile and the others load, and still writes nothing next to the sources."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return {}
    return {
        "PYTHONDONTWRITEBYTECODE": "",
        "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "pronghorn-tests-pycache"),
    }


def base_config(**overrides: Any) -> dict[str, Any]:
    """A config for tests: data in the work dir, the LLM-free test graphs registered."""
    cfg: dict[str, Any] = {
        "data_dir": "data",
        "graphs": {
            "echo": "testgraphs.echo:graph",
            "nested": "testgraphs.nested:graph",
        },
        "logging": {"level": "INFO"},
        "auth": {"mode": "none"},
        # Off unless a test turns it on: a background memory update would call the run's
        # model (a fake provider's queued replies) at a time no test controls.
        "memory": {"enabled": False},
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    return cfg
