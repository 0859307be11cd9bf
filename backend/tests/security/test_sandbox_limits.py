"""Issue 16 part 5: resource exhaustion and kernel attack surface from inside the sandbox.

Each test runs the attack for real through the real sandbox (bubblewrap, the seccomp
filter, cgroups where this machine offers them, rlimits otherwise) with small limits, then
checks that the named limit stopped it and that the host is fine afterwards. The last test
drives the attacks through a gateway's ``bash`` tool while /health is polled.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import LocalSandbox, LocalSandboxProvider, cgroups
from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox.errors import SandboxError
from support.inproc import InProcessServer
from support.sdk import as_state

from .conftest import assert_responsive

MIB = 1024 * 1024
LIMITS = {
    "processes": 32,
    "memory_bytes": 256 * MIB,
    "cpu_seconds": 1,
    "file_size_bytes": 2 * MIB,
    "workspace_quota_bytes": 6 * MIB,
}
# A fork bomb that is bounded even if no limit held: depth 8 is at most 511 processes, each
# leaf living two seconds. The limit (32) stops it long before that; the command's timeout
# then ends it (bash keeps retrying a refused fork).
FORK_BOMB = (
    'b() { if [ "$1" -gt 0 ]; then b $(($1 - 1)) & b $(($1 - 1)) & wait; else sleep 2; fi; }; '
    "b 8; echo bomb-finished"
)
BOMB_TIMEOUT_S = 6
MEMORY_HOG = "python3 -c 'x = bytearray(600 << 20); x[::4096] = b\"x\" * len(x[::4096]); print(1)'"
CPU_SPINNER = "while :; do :; done"


def _bwrap_works() -> bool:
    import asyncio

    path = bw.find_bwrap()
    return path is not None and asyncio.run(bw.probe(path, network=False))[0]


pytestmark = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap cannot run here")


@pytest.fixture
async def provider(
    tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[LocalSandboxProvider]:
    """A bwrap sandbox provider with LIMITS, or with LIMITS updated by an indirect parameter."""
    limits = {**LIMITS, **getattr(request, "param", {})}
    config = AppConfig.model_validate(
        {
            "data_dir": str(tmp_path / "data"),
            "sandbox": {"command_timeout_s": 20, "limits": limits},
        }
    )
    provider = LocalSandboxProvider(config)
    assert await provider.start() == "bwrap"
    yield provider
    await provider.close()


@pytest.fixture
async def sandbox(provider: LocalSandboxProvider) -> LocalSandbox:
    sb = await provider.acquire("mallory", str(uuid.uuid4()))
    assert isinstance(sb, LocalSandbox)
    return sb


async def _host_fine(sb: LocalSandbox) -> None:
    """A plain command still works afterwards, and nothing of the attack is left running."""
    r = await sb.execute("echo still-ok")
    assert r.exit_code == 0 and r.stdout == "still-ok\n", r
    assert not _leftover_commands(sb.thread_paths.thread_id)
    assert not _leftover_cgroups(sb.thread_paths.thread_id)


def _of_sandbox(pid: str, marker: str) -> bool:
    """The process runs in this sandbox: its mount table binds the thread's folder (other
    tests, e.g. on other xdist workers, run sandboxed commands of their own meanwhile)."""
    try:
        return marker.encode() in Path(f"/proc/{pid}/mountinfo").read_bytes()
    except OSError:
        return False


def _leftover_commands(marker: str) -> list[str]:
    """Processes of a sandboxed command of this sandbox (the limits prologue names itself)
    still alive."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"pronghorn-limits" in (proc / "cmdline").read_bytes():
                found.append(proc.name)
        except OSError:
            continue
    return [pid for pid in found if _of_sandbox(pid, marker)]


def _leftover_cgroups(marker: str) -> list[Path]:
    """Command cgroups still holding a process of this sandbox."""
    support = cgroups.detect()
    groups = [p for parent in support.parents.values() for p in parent.glob("pronghorn-cmd-*")]
    return [g for g in groups if any(_of_sandbox(pid, marker) for pid in _procs(g))]


def _procs(group: Path) -> list[str]:
    try:
        return (group / "cgroup.procs").read_text().split()
    except OSError:
        return []


class PeakCount:
    """Counts, from the host, how many processes a command has while it runs: ``groups``
    sorts each live process into a group (None: not counted); ``peak`` is the largest group
    seen. A thread polls /proc until the block ends."""

    def __init__(self, groups: Callable[[str], str | None]) -> None:
        self._groups = groups
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self.peak = 0

    def __enter__(self) -> PeakCount:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def count(self) -> int:
        sizes: dict[str, int] = {}
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                group = self._groups(proc.name)
                if group is not None:
                    sizes[group] = sizes.get(group, 0) + 1
        return max(sizes.values(), default=0)

    def _poll(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self.count())


def _command_cgroup(pid: str) -> str | None:
    """The pids cgroup of a sandboxed command the process is in (one group per command)."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if cgroups.PREFIX in line and ("pids" in line.split(":")[1] or line.startswith("0::")):
            return line.split(":", 2)[2]
    return None


def _real_uid(pid: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _wait_until(condition: Callable[[], bool], timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.02)
    return True


async def test_fork_bomb_is_stopped_by_the_process_limit(
    sandbox: LocalSandbox, provider: LocalSandboxProvider
) -> None:
    if not provider.enforcement.cgroups.has("pids"):
        pytest.skip("no pids cgroup here (the host-uid test covers this host)")
    with PeakCount(_command_cgroup) as seen:
        r = await sandbox.execute(FORK_BOMB, timeout_s=BOMB_TIMEOUT_S)
    assert "processes" in r.limits_hit, r
    assert "[sandbox limit] process limit reached" in r.stderr
    assert "at most 32 processes" in r.stderr
    # Seen from the host: the command never had more than its 32 processes (the bomb
    # unbounded would reach 511).
    assert 0 < seen.peak <= 32, seen.peak
    await _host_fine(sandbox)


async def test_pid_1_shows_no_host_path_or_owner(
    sandbox: LocalSandbox, provider: LocalSandboxProvider
) -> None:
    r = await sandbox.execute(
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; tr '\\0' ' ' < $p/environ;"
        " echo; done"
    )
    assert r.exit_code == 0, r
    assert "--args" in r.stdout  # bwrap's reaper is pid 1: its options came from a descriptor
    for secret in (str(provider.data_dir), "mallory", sandbox.thread_paths.thread_id):
        assert secret not in r.stdout, secret


# On a loaded machine, faulting in pages near the memory limit costs CPU time (reclaim):
# the hog gets room on CPU so that the memory limit, the one under test, is what stops it.
@pytest.mark.parametrize("provider", [{"cpu_seconds": 30}], indirect=True, ids=["roomy-cpu"])
async def test_memory_hog_is_stopped(sandbox: LocalSandbox) -> None:
    r = await sandbox.execute(MEMORY_HOG)
    assert r.exit_code != 0 and r.stdout == ""
    assert r.limits_hit == ("memory",), r
    assert "[sandbox limit] memory limit reached" in r.stderr
    assert "256 MiB" in r.stderr
    await _host_fine(sandbox)


async def test_cpu_spinner_is_killed_by_the_cpu_limit(sandbox: LocalSandbox) -> None:
    r = await sandbox.execute(CPU_SPINNER, timeout_s=20)
    assert not r.timed_out, "the CPU limit, not the timeout, must stop it"
    assert r.exit_code == 152  # 128 + SIGXCPU
    assert r.limits_hit == ("cpu",)
    assert "CPU time limit reached: a process may use 1 s of CPU" in r.stderr
    await _host_fine(sandbox)


async def test_file_over_the_size_limit_is_refused(sandbox: LocalSandbox) -> None:
    r = await sandbox.execute("head -c 5000000 /dev/zero > big.bin; echo next; ls -l big.bin")
    assert "file_size" in r.limits_hit, r
    assert "no file may be larger than 2 MiB" in r.stderr
    assert (sandbox.thread_paths.workspace / "big.bin").stat().st_size <= 2 * MIB
    # /tmp is bounded the same way.
    r = await sandbox.execute("head -c 5000000 /dev/zero > /tmp/big.bin")
    assert r.exit_code == 153 and "file_size" in r.limits_hit
    await _host_fine(sandbox)


async def test_writing_past_the_workspace_quota_is_stopped(sandbox: LocalSandbox) -> None:
    # Each file is under the file-size limit; together they pass the 6 MiB quota. The
    # watchdog stops the command while it runs.
    slow_writer = (
        "for i in $(seq 60); do head -c 1000000 /dev/urandom > f$i; sleep 0.2; done; "
        "echo writer-finished"
    )
    r = await sandbox.execute(slow_writer, timeout_s=30)
    assert "quota" in r.limits_hit, r
    assert "writer-finished" not in r.stdout
    assert "workspace quota exceeded" in r.stderr and "the command was stopped" in r.stderr
    files = list(sandbox.thread_paths.workspace.glob("f*"))
    assert len(files) < 60
    # Over quota: the next command runs, but no file can grow; deleting still works.
    r = await sandbox.execute("echo more > extra.txt")
    assert r.exit_code != 0 and "quota" in r.limits_hit
    assert "Delete files to free space" in r.stderr
    assert (sandbox.thread_paths.workspace / "extra.txt").stat().st_size == 0
    r = await sandbox.execute("rm -f f*")
    assert r.exit_code == 0
    r = await sandbox.execute("echo fits > small.txt && cat small.txt")
    assert r.exit_code == 0 and r.stdout == "fits\n" and r.limits_hit == ()


async def test_a_file_cannot_outgrow_what_is_left_of_the_quota(sandbox: LocalSandbox) -> None:
    await sandbox.execute("head -c 1500000 /dev/zero > a; head -c 1500000 /dev/zero > b")
    r = await sandbox.execute("head -c 1900000 /dev/urandom > c; head -c 1900000 /dev/zero > d")
    # 3 MiB used of 6: c fits, d is cut at what was left when the command started.
    assert "quota" in r.limits_hit, r
    total = sum(p.stat().st_size for p in sandbox.thread_paths.workspace.iterdir())
    assert total <= 6 * MIB + 2 * MIB


async def test_nested_user_namespaces_are_refused(sandbox: LocalSandbox) -> None:
    r = await sandbox.execute("unshare -U true; echo rc=$?; unshare -rn true; echo rc=$?")
    assert r.stdout == "rc=1\nrc=1\n"
    assert "Operation not permitted" in r.stderr
    r = await sandbox.execute("bwrap --ro-bind / / true; echo rc=$?")
    assert r.stdout == "rc=1\n"
    # Threads still work: clone3 answers ENOSYS and libc falls back to clone.
    r = await sandbox.execute(
        'python3 -c \'import threading; t = threading.Thread(target=print, args=("t",)); '
        "t.start(); t.join()'"
    )
    assert r.exit_code == 0 and r.stdout == "t\n"


SYSCALL = (
    "python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
    "rc = libc.syscall({nr}, {args}); print(rc, ctypes.get_errno())'"
)


@pytest.mark.parametrize(
    ("name", "nr", "args"),
    [
        ("keyctl", 250, "0, 0, 0, 0, 0"),  # KEYCTL_GET_KEYRING_ID
        ("add_key", 248, 'b"user", b"k", b"v", 1, -3'),
        ("bpf", 321, "0, 0, 0"),
        ("perf_event_open", 298, "0, 0, -1, -1, 0"),
        ("userfaultfd", 323, "0"),
        ("ptrace", 101, "0, 0, 0, 0"),  # PTRACE_TRACEME
        ("mount", 165, 'b"none", b"/tmp", b"tmpfs", 0, 0'),
        ("setns", 308, "0, 0"),
        ("io_uring_setup", 425, "1, 0"),
        ("ioctl TIOCSTI", 16, '0, 0x5412, b"x"'),
        ("personality ADDR_NO_RANDOMIZE", 135, "0x0040000"),
    ],
)
async def test_kernel_attack_surface_is_denied(
    sandbox: LocalSandbox, name: str, nr: int, args: str
) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("syscall numbers in this test are x86_64's")
    r = await sandbox.execute(SYSCALL.format(nr=nr, args=args))
    assert r.exit_code == 0, r
    assert r.stdout == "-1 1\n", f"{name}: {r.stdout!r}"  # EPERM


async def test_x32_abi_is_killed(sandbox: LocalSandbox) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("x32 exists on x86_64 only")
    # getpid through the x32 ABI (bit 30): the filter kills the process (SIGSYS).
    r = await sandbox.execute(SYSCALL.format(nr=0x40000000 | 39, args="0"))
    assert r.exit_code == 128 + 31 and r.stdout == ""


# --- through the gateway -----------------------------------------------------------------


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {
        "match": "exhaust",
        "steps": [
            _call("bash", description="bomb", command=FORK_BOMB),
            _call("bash", description="hog", command=MEMORY_HOG),
            _call("bash", description="spin", command=CPU_SPINNER),
            _call("bash", description="escape", command="unshare -U id; echo rc=$?"),
            {"text": "done"},
        ],
    }
]


async def test_attacks_through_the_bash_tool_leave_the_gateway_responsive(
    start_app: Callable[..., InProcessServer],
) -> None:
    # The gateway app in this process (its own loop thread): the attacks need its sandbox
    # and its event loop, not a port.
    gateway = start_app(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={"isolation": "bwrap", "command_timeout_s": BOMB_TIMEOUT_S, "limits": LIMITS},
    )
    client = gateway.sdk()
    tid = (await client.threads.create())["thread_id"]
    with assert_responsive(gateway):
        result = await client.runs.wait(
            tid,
            "lead_agent",
            input={"messages": [{"role": "human", "content": "exhaust the machine"}]},
        )
    tools = [m for m in as_state(result)["messages"] if m["type"] == "tool"]
    assert len(tools) == 4, as_state(result)["messages"]
    bomb, hog, spin, escape = (m["content"] for m in tools)
    assert "[sandbox limit] process limit reached" in bomb
    assert "[sandbox limit] memory limit reached" in hog
    assert "[sandbox limit] CPU time limit reached" in spin
    assert "rc=1" in escape and "Operation not permitted" in escape
    assert as_state(result)["messages"][-1]["content"] == "done"
    async with gateway.ahttp() as http:
        assert (await http.get("/health")).status_code == 200


# --- the rlimit fallback (no cgroups) ------------------------------------------------------


@pytest.fixture
def searchable_dir() -> Iterator[Path]:
    """A folder others may search (pytest's own folders are 0700): as root without a pids
    cgroup, commands run as a host uid that must reach the data dir."""
    top = Path(tempfile.mkdtemp(prefix="pronghorn-sandbox-"))
    os.chmod(top, 0o711)
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
async def rlimit_sandbox(searchable_dir: Path) -> AsyncIterator[LocalSandbox]:
    config = AppConfig.model_validate(
        {
            "data_dir": str(searchable_dir / "data"),
            "sandbox": {"command_timeout_s": 20, "limits": {**LIMITS, "cgroup": "off"}},
        }
    )
    provider = LocalSandboxProvider(config)
    sb = await provider.acquire("mallory", str(uuid.uuid4()))
    assert isinstance(sb, LocalSandbox)
    report = provider.limits_report()
    assert report["cgroup"] is None
    assert report["memory_bytes"] == {"value": 256 * MIB, "enforced_by": "rlimit"}
    yield sb
    await provider.close()


async def test_memory_hog_is_stopped_by_the_address_space_limit(
    rlimit_sandbox: LocalSandbox,
) -> None:
    r = await rlimit_sandbox.execute(MEMORY_HOG)
    assert r.exit_code == 1 and "MemoryError" in r.stderr
    assert r.limits_hit == ("memory",)
    assert "each process may use at most 256 MiB" in r.stderr
    await _host_fine(rlimit_sandbox)


async def test_cpu_and_file_limits_hold_without_cgroups(rlimit_sandbox: LocalSandbox) -> None:
    r = await rlimit_sandbox.execute(CPU_SPINNER)
    assert r.exit_code == 152 and r.limits_hit == ("cpu",)
    r = await rlimit_sandbox.execute("head -c 5000000 /dev/zero > big.bin")
    assert r.exit_code == 153 and r.limits_hit == ("file_size",)
    r = await rlimit_sandbox.execute("unshare -U true")
    assert r.exit_code == 1  # seccomp does not depend on cgroups


@pytest.mark.skipif(os.geteuid() == 0, reason="RLIMIT_NPROC does not bind root")
async def test_fork_bomb_is_stopped_by_rlimit_nproc(rlimit_sandbox: LocalSandbox) -> None:
    r = await rlimit_sandbox.execute(FORK_BOMB, timeout_s=BOMB_TIMEOUT_S)
    assert "processes" in r.limits_hit, r
    await _host_fine(rlimit_sandbox)


# --- a host uid per sandbox (root, no pids cgroup) -----------------------------------------


@pytest.fixture
async def uid_provider(searchable_dir: Path) -> LocalSandboxProvider:
    """Root with cgroups off: commands run as a host uid of their own sandbox."""
    if os.geteuid() != 0:
        pytest.skip("the per-sandbox host uid is for a gateway running as root")
    config = AppConfig.model_validate(
        {
            "data_dir": str(searchable_dir / "data"),
            "sandbox": {"command_timeout_s": 20, "limits": {**LIMITS, "cgroup": "off"}},
        }
    )
    provider = LocalSandboxProvider(config)
    assert await provider.start() == "bwrap"
    report = provider.limits_report()
    assert report["processes"] == {"value": 32, "enforced_by": "rlimit, a host uid per sandbox"}
    return provider


async def test_fork_bomb_is_contained_by_a_host_uid_per_sandbox(
    uid_provider: LocalSandboxProvider,
) -> None:
    sb = await uid_provider.acquire("mallory", str(uuid.uuid4()))
    assert isinstance(sb, LocalSandbox)
    ids = uid_provider.enforcement.host_ids
    assert ids is not None
    uid = ids.uid_for(sb.thread_paths)
    r = await sb.execute("id -u; echo made > mine.txt; cat mine.txt")
    assert r.exit_code == 0 and r.stdout == "1000\nmade\n", r
    assert (sb.thread_paths.workspace / "mine.txt").stat().st_uid == uid

    def of_uid(pid: str) -> str | None:
        return "sandbox" if _real_uid(pid) == uid else None

    with PeakCount(of_uid) as seen:
        r = await sb.execute(FORK_BOMB, timeout_s=BOMB_TIMEOUT_S)
    assert "processes" in r.limits_hit, r
    assert "at most 32 processes" in r.stderr
    # Seen from the host: the uid had at most the 32 processes of the limit, plus bwrap's
    # own process and its reaper (the bomb unbounded would reach 511).
    assert 0 < seen.peak <= 32 + 2, seen.peak
    assert _wait_until(lambda: seen.count() == 0), "processes of the sandbox uid outlived it"
    await _host_fine(sb)
    # Files the gateway wrote meanwhile are handed to the sandbox uid before a command.
    (sb.thread_paths.uploads / "from-gateway.txt").write_text("hello")
    r = await sb.execute("echo more >> /mnt/user-data/uploads/from-gateway.txt && echo ok")
    assert r.stdout == "ok\n", r


async def test_host_uid_sandbox_shows_no_host_path(uid_provider: LocalSandboxProvider) -> None:
    sb = await uid_provider.acquire("mallory", str(uuid.uuid4()))
    assert isinstance(sb, LocalSandbox)
    r = await sb.execute("tr '\\0' ' ' < /proc/1/cmdline")
    assert r.exit_code == 0 and "--args" in r.stdout, r
    assert str(uid_provider.data_dir) not in r.stdout and "mallory" not in r.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds a non-root gateway")
async def test_root_without_any_process_bound_refuses_commands(tmp_path: Path) -> None:
    config = AppConfig.model_validate(
        {
            "data_dir": str(tmp_path / "data"),
            "sandbox": {"limits": {**LIMITS, "cgroup": "off", "host_uid_base": 0}},
        }
    )
    provider = LocalSandboxProvider(config)
    sb = await provider.acquire("mallory", str(uuid.uuid4()))
    with pytest.raises(SandboxError, match="refuses to run commands") as err:
        await sb.execute("echo never")
    assert "host_uid_base is 0" in str(err.value)
    assert provider.limits_report()["processes"] == {"value": 32, "enforced_by": None}
    # File tools still work: only commands could start processes.
    await sb.write_file("/mnt/user-data/workspace/a.txt", "x")
    assert await sb.read_file("/mnt/user-data/workspace/a.txt") == "x"


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds a non-root gateway")
async def test_a_pids_cgroup_that_cannot_be_made_refuses_the_command(tmp_path: Path) -> None:
    """The pids cgroup is root's only bound: when one cannot be created for a command (here
    its parent is gone), the command is refused instead of running unbounded."""
    from pronghorn.sandbox.local import Enforcement
    from pronghorn.sandbox.paths import ThreadPaths

    config = AppConfig.model_validate(
        {"data_dir": str(tmp_path / "data"), "sandbox": {"limits": LIMITS}}
    )
    gone = cgroups.CgroupSupport(1, {"pids": tmp_path / "no-such-cgroup"}, reason="test")
    paths = ThreadPaths.for_thread(tmp_path / "data", "mallory", str(uuid.uuid4()))
    bwrap = bw.find_bwrap()
    sb = LocalSandbox(paths, config.sandbox, "bwrap", bwrap, Enforcement(gone, None, False))
    with pytest.raises(SandboxError, match="no pids cgroup could be made"):
        await sb.execute("echo never")
