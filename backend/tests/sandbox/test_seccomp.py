"""The seccomp filter: its syscall tables against the kernel headers, and every rule checked
by running the compiled program in a small classic-BPF interpreter (the kernel's behaviour
for the five instructions the filter uses). tests/security/test_sandbox_limits.py runs the
same filter for real under bwrap."""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from pronghorn.sandbox import seccomp as sc


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Evaluate ``program`` on one ``struct seccomp_data``; returns the action."""
    full = (*args, *([0] * (6 - len(args))))
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(a & 0xFFFFFFFFFFFFFFFF for a in full))
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    acc = 0
    pc = 0
    for _ in range(len(insns) + 1):
        code, jt, jf, k = insns[pc]
        if code == sc.BPF_LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == sc.BPF_RET_K:
            return k
        else:
            taken = {
                sc.BPF_JEQ_K: acc == k,
                sc.BPF_JGE_K: acc >= k,
                sc.BPF_JSET_K: bool(acc & k),
            }[code]
            pc += 1 + (jt if taken else jf)
    raise AssertionError("the program did not return")


X86 = sc.ARCHES["x86_64"]
PROGRAM = sc.compile_filter("x86_64")
NR = X86.numbers
EPERM = sc.errno_ret(errno.EPERM)
ALLOW = sc.SECCOMP_RET_ALLOW


def decide(name_or_nr: str | int, *args: int, arch: int = sc.AUDIT_ARCH_X86_64) -> int:
    nr = NR[name_or_nr] if isinstance(name_or_nr, str) else name_or_nr
    return run_filter(PROGRAM, nr, arch, args)


def test_foreign_architecture_and_x32_are_killed() -> None:
    assert decide(0, arch=0x40000003) == sc.SECCOMP_RET_KILL_PROCESS  # i386 int 0x80
    assert decide(0, arch=sc.AUDIT_ARCH_AARCH64) == sc.SECCOMP_RET_KILL_PROCESS
    assert decide(sc.X32_SYSCALL_BIT | 39) == sc.SECCOMP_RET_KILL_PROCESS
    assert decide(sc.X32_SYSCALL_BIT | NR["keyctl"]) == sc.SECCOMP_RET_KILL_PROCESS


@pytest.mark.parametrize("name", sorted(n for n in sc.DENIED if n in NR))
def test_denied_calls_answer_eperm(name: str) -> None:
    assert decide(name) == EPERM


def test_ordinary_calls_are_allowed() -> None:
    for nr in (0, 1, 2, 39, 57, 59, 60, 231):  # read write open getpid fork execve exit...
        assert decide(nr) == ALLOW


def test_clone3_answers_enosys() -> None:
    assert decide("clone3") == sc.errno_ret(errno.ENOSYS)


def test_clone_with_namespace_flags_is_refused() -> None:
    thread_flags = 0x3D0F00  # CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID...
    assert decide("clone", thread_flags) == ALLOW
    assert decide("clone", 17) == ALLOW  # fork(): SIGCHLD only
    for flag in (sc.CLONE_NEWUSER, sc.CLONE_NEWNS, sc.CLONE_NEWPID, sc.CLONE_NEWNET):
        assert decide("clone", 17 | flag) == EPERM
    # The exit-signal byte may hold 0x80 (it overlaps CLONE_NEWTIME) without being refused.
    assert decide("clone", 0x80) == ALLOW
    # Only the low 32 bits are flags; high bits do not hide a namespace flag.
    assert decide("clone", (1 << 40) | sc.CLONE_NEWUSER) == EPERM


def test_unshare_with_any_namespace_flag_is_refused() -> None:
    assert decide("unshare", 0x400) == ALLOW  # CLONE_FILES: no namespace
    for flag in (sc.CLONE_NEWUSER, sc.CLONE_NEWTIME, sc.CLONE_NEWCGROUP, sc.CLONE_NEWUTS):
        assert decide("unshare", flag) == EPERM


def test_terminal_injection_ioctls_are_refused() -> None:
    assert decide("ioctl", 0, sc.TIOCSTI) == EPERM
    assert decide("ioctl", 0, sc.TIOCLINUX) == EPERM
    assert decide("ioctl", 0, 0x5401) == ALLOW  # TCGETS
    assert decide("ioctl", 0, (1 << 32) | sc.TIOCSTI) == EPERM  # cmd is 32-bit


def test_only_harmless_personalities() -> None:
    for value in sc.PERSONALITY_ALLOWED:
        assert decide("personality", value) == ALLOW
    assert decide("personality", 0x0040000) == EPERM  # ADDR_NO_RANDOMIZE
    assert decide("personality", 0x0400000) == EPERM  # READ_IMPLIES_EXEC


def test_aarch64_program_checks_its_own_arch() -> None:
    program = sc.compile_filter("aarch64")
    table = sc.ARCHES["aarch64"]
    assert run_filter(program, 0, sc.AUDIT_ARCH_X86_64) == sc.SECCOMP_RET_KILL_PROCESS
    assert run_filter(program, table.numbers["keyctl"], table.audit_arch) == EPERM
    assert run_filter(program, 63, table.audit_arch) == ALLOW  # read
    clone = table.numbers["clone"]
    assert run_filter(program, clone, table.audit_arch, (sc.CLONE_NEWUSER,)) == EPERM


def _header_numbers(path: Path, prefix: str) -> dict[str, int]:
    pattern = re.compile(rf"#define {prefix}(\w+)\s+(\d+)\b")
    return {m[1]: int(m[2]) for m in pattern.finditer(path.read_text())}


@pytest.mark.parametrize(
    ("arch", "header", "prefix"),
    [
        ("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "__NR_"),
        ("aarch64", "/usr/include/asm-generic/unistd.h", "__NR(?:3264)?_"),
    ],
)
def test_syscall_numbers_match_the_kernel_headers(arch: str, header: str, prefix: str) -> None:
    path = Path(header)
    if not path.exists():
        pytest.skip(f"{header} is not installed")
    known = _header_numbers(path, prefix)
    for name, number in sc.ARCHES[arch].numbers.items():
        assert known.get(name) == number, name


def test_every_denied_call_is_in_each_table_or_absent_on_that_arch() -> None:
    x86_only = {"iopl", "ioperm"}
    for arch, table in sc.ARCHES.items():
        missing = set(sc.DENIED) - set(table.numbers)
        assert missing <= (x86_only if arch != "x86_64" else set()), (arch, missing)


def test_filter_fd_holds_the_program() -> None:
    import os

    fd = sc.filter_fd(PROGRAM)
    try:
        assert os.read(fd, len(PROGRAM) + 1) == PROGRAM
    finally:
        os.close(fd)
