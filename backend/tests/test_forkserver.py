"""The fork server behind LiveServer and the CLI runs (support/forkserver.py): a forked child
must be the process `python -m MODULE` would have been — argv, working directory, import
path, environment, stdio, exit status, its own session, signals — and must not outlive the
test that dropped it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.forkserver import ForkedProcess, ForkServer, popen, run
from support.live import server_env

PROBE = """\
import json, os, sys
if sys.argv[1:2] == ["hang"]:
    sys.stdin.read()  # until the test's end of the pipe closes, or a signal
print(json.dumps({
    "argv": sys.argv[1:], "cwd": os.getcwd(), "path0": sys.path[0], "sid": os.getsid(0),
    "pid": os.getpid(), "env": {k: os.environ.get(k) for k in ("PROBE", "LEAK")},
    "stdin": sys.stdin.read(), "main": __name__,
}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture(scope="module")
def fork_server() -> Iterator[ForkServer]:
    server = ForkServer({**server_env(), "LEAK": "from the fork server"})
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def probe_dir(tmp_path: Path) -> Path:
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path


def _env(**extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": server_env()["PYTHONPATH"], **extra}


def _gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def test_a_forked_child_is_what_python_m_would_have_started(fork_server, probe_dir):
    argv = [sys.executable, "-m", "probe", "one", "--two"]
    env = _env(PROBE="yes", PROBE_EXIT="3")
    done = run(argv, cwd=probe_dir, env=env, server=fork_server, input="typed in")
    assert done.returncode == 3
    assert done.stderr == "to stderr\n"
    seen = json.loads(done.stdout)
    assert seen["argv"] == ["one", "--two"] and seen["main"] == "__main__"
    assert seen["cwd"] == seen["path0"] == str(probe_dir)  # `-m` imports from the start dir
    assert seen["env"] == {"PROBE": "yes", "LEAK": None}  # exactly the env it was given
    assert seen["stdin"] == "typed in"
    assert seen["sid"] == seen["pid"]  # a session (and process group) of its own
    assert seen["pid"] != fork_server.pid


@contextlib.contextmanager
def hanging(fork_server: ForkServer, probe_dir: Path) -> Iterator[ForkedProcess]:
    """A forked child that runs until a signal (or until its stdin pipe closes, after)."""
    read_end, write_end = os.pipe()
    try:
        proc = popen(
            [sys.executable, "-m", "probe", "hang"],
            cwd=probe_dir,
            env=_env(),
            server=fork_server,
            stdin=read_end,
        )
        assert isinstance(proc, ForkedProcess)
        os.close(read_end)
        read_end = -1
        yield proc
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)


def test_signals_and_exit_status_reach_the_test(fork_server, probe_dir):
    with hanging(fork_server, probe_dir) as proc:
        assert proc.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(0.2)
        os.killpg(proc.pid, signal.SIGTERM)  # the group is the child's
        assert proc.wait(30) == -signal.SIGTERM
        assert proc.returncode == -signal.SIGTERM and proc.poll() == -signal.SIGTERM
        proc.kill()  # a no-op once it ended, as with Popen


def test_a_child_the_test_drops_is_killed(fork_server, probe_dir):
    with hanging(fork_server, probe_dir) as proc:
        proc.close()  # what garbage collection or a dying test process does
        assert _gone(proc.pid)  # its stdin is still open: the fork server killed it


def test_what_changes_how_python_starts_goes_to_popen(fork_server, probe_dir):
    changed = _env(PYTHONPATH=f"{probe_dir}:{server_env()['PYTHONPATH']}")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    proc = popen(
        [sys.executable, "-m", "probe"], cwd=probe_dir, env=changed, server=fork_server, **quiet
    )
    assert isinstance(proc, subprocess.Popen)
    assert proc.wait(60) == 0
    other = popen(["/bin/true"], cwd=probe_dir, env=_env(), server=fork_server, **quiet)
    assert isinstance(other, subprocess.Popen)
    assert other.wait(60) == 0
    # Bytecode and buffering settings do not matter: still forked.
    same = popen(
        [sys.executable, "-m", "probe"],
        cwd=probe_dir,
        env=_env(PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1"),
        server=fork_server,
        **quiet,
    )
    assert isinstance(same, ForkedProcess)
    assert same.wait(60) == 0
