"""The container keeps the sandbox on: the compose file ships the security options bwrap
needs, and the shipped seccomp profile really lets bwrap build the per-command sandbox
(run here: the profile is compiled to BPF and bwrap runs under it as an unprivileged user,
as in the image) while still denying the kernel attack surface."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox import seccomp as sc
from pronghorn.sandbox.paths import ThreadPaths

REPO = Path(__file__).resolve().parents[3]
COMPOSE = REPO / "docker" / "docker-compose.yaml"
HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
# What bubblewrap calls to build the sandbox (plus what it needs to apply our filter).
BWRAP_NEEDS = {"clone", "clone3", "unshare", "mount", "umount2", "pivot_root", "prctl", "seccomp"}


def _gateway() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())["services"]["gateway"]


def _profile() -> dict[str, Any]:
    opts = _gateway()["security_opt"]
    paths = [o.split("=", 1)[1] for o in opts if o.startswith("seccomp=")]
    assert len(paths) == 1, opts
    # Compose resolves the path against the compose file's folder.
    return json.loads((COMPOSE.parent / paths[0]).read_text())


def _denied(profile: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for rule in profile["syscalls"]:
        assert rule["action"] == "SCMP_ACT_ERRNO" and rule["errnoRet"] == errno.EPERM, rule
        assert "args" not in rule and "includes" not in rule
        out.update(rule["names"])
    return out


def test_compose_keeps_isolation_on() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name in ("gateway", "replica"):
        svc = services[name]
        opts = set(svc["security_opt"])
        assert {"no-new-privileges:true", "apparmor=unconfined"} <= opts, name
        assert "seccomp=unconfined" not in opts  # a shipped profile, not no filter at all
        # Compose 1.29 refuses systempaths=unconfined: the entrypoint mounts a visible /proc
        # as root instead, with only the capabilities it needs for that and for dropping to
        # uid 10001 (tests/containers checks the server ends up with none).
        assert "systempaths=unconfined" not in opts
        assert svc["user"] == "0:0"
        assert svc["cap_drop"] == ["ALL"]
        assert sorted(svc["cap_add"]) == ["SETGID", "SETPCAP", "SETUID", "SYS_ADMIN"]
        assert "privileged" not in svc


def test_profile_allows_bwrap_and_denies_the_attack_surface() -> None:
    profile = _profile()
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    # Native ABI only: no 32-bit or x32 sub-architectures.
    assert all(entry["subArchitectures"] == [] for entry in profile["archMap"])
    denied = _denied(profile)
    assert not denied & BWRAP_NEEDS
    # Everything the per-command filter denies outright is denied for the gateway too,
    # except the calls bwrap itself must make.
    mount_family = {"mount", "umount2", "pivot_root", "setns"} | {
        n for n in sc.DENIED if n.startswith(("fs", "open_tree", "move_mount", "mount_"))
    }
    assert set(sc.DENIED) - mount_family <= denied


def _numbers() -> dict[str, int]:
    pattern = re.compile(r"#define __NR_(\w+)\s+(\d+)\b")
    return {m[1]: int(m[2]) for m in pattern.finditer(HEADER.read_text())}


def _compile_profile(profile: dict[str, Any]) -> bytes:
    """The profile as the container runtime would load it on x86_64: native arch only,
    listed calls answer EPERM, the rest is allowed."""
    numbers = _numbers()
    p = sc._Program()
    p.load(sc.OFF_ARCH)
    p.jump(sc.BPF_JEQ_K, sc.AUDIT_ARCH_X86_64, 0, "kill")
    p.load(sc.OFF_NR)
    p.jump(sc.BPF_JGE_K, sc.X32_SYSCALL_BIT, "kill", 0)
    for nr in sorted(numbers[n] for n in _denied(profile) if n in numbers):
        p.jump(sc.BPF_JEQ_K, nr, "eperm", 0)
    p.ret(sc.SECCOMP_RET_ALLOW)
    p.label("eperm")
    p.ret(sc.errno_ret(errno.EPERM))
    p.label("kill")
    p.ret(sc.SECCOMP_RET_KILL_PROCESS)
    return b"".join(insn.pack() for insn in p.assemble())


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A folder an unprivileged uid can use (pytest's tmp folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="pronghorn-container-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _unprivileged(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to drop root")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", *argv]


@pytest.mark.skipif(not HEADER.exists() or os.uname().machine != "x86_64", reason="x86_64")
def test_bwrap_builds_the_sandbox_under_the_shipped_profile(world_dir: Path) -> None:
    binary = bw.find_bwrap()
    if binary is None:
        pytest.skip("bubblewrap is not installed")
    profile_fd = sc.filter_fd(_compile_profile(_profile()))
    inner_fd = sc.filter_fd(sc.compile_filter("x86_64"))
    paths = ThreadPaths(
        user_id="u",
        thread_id="00000000-0000-0000-0000-000000000000",
        root=world_dir,
        workspace=world_dir / "workspace",
        uploads=world_dir / "uploads",
        outputs=world_dir / "outputs",
    )
    paths.ensure()
    for folder in (paths.workspace, paths.uploads, paths.outputs):
        folder.chmod(0o777)
    check = (
        "echo inside-$(id -u); unshare -U true 2>/dev/null || echo nested-refused; "
        "echo x > /mnt/user-data/outputs/ok.txt"
    )
    inner = bw.build_argv(
        binary,
        paths,
        check,
        network=False,
        env={"PATH": bw.SANDBOX_PATH},
        seccomp_fd=inner_fd,
        tmp_bytes=16 * 1024 * 1024,
    )
    # The outer bwrap stands in for the container: an unprivileged user under the shipped
    # profile, with a fully visible /proc (systempaths=unconfined).
    gateway_probe = (
        'python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); '
        'print(l.syscall(250, 0, 0, 0, 0, 0), ctypes.get_errno())"'
    )
    outer = [
        binary,
        "--unshare-user",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--tmpfs",
        "/tmp",
        "--bind",
        str(world_dir),
        str(world_dir),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--seccomp",
        str(profile_fd),
        "/bin/sh",
        "-c",
        f'{gateway_probe}; exec "$@"',
        "gateway",
        *inner,
    ]
    try:
        result = subprocess.run(
            _unprivileged(outer),
            capture_output=True,
            text=True,
            timeout=60,
            pass_fds=(profile_fd, inner_fd),
        )
    finally:
        os.close(profile_fd)
        os.close(inner_fd)
    assert result.returncode == 0, result.stderr
    # keyctl is denied for the gateway itself; the sandbox runs, as uid 1000, under its own
    # filter (no nested namespace), and writes the thread's folder.
    assert result.stdout.splitlines() == ["-1 1", "inside-1000", "nested-refused"]
    assert (paths.outputs / "ok.txt").read_text() == "x\n"
