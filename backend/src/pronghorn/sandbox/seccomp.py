"""The seccomp filter every sandboxed command runs under (handed to ``bwrap --seccomp FD``).

bubblewrap applies no system-call filter of its own, so a command could otherwise reach
kernel attack surface that has a long history of privilege escalations: nested user
namespaces (which hand out capabilities over a fresh namespace), the keyring, eBPF,
perf events, userfaultfd, io_uring, module loading and so on. The filter below is a
classic-BPF program assembled here (a few dozen instructions; no native library needed)
and documented rule by rule in docs/sandbox.md:

1. the architecture must be the host's (x86_64 or aarch64), otherwise the process is
   killed; on x86_64 the x32 ABI (syscall numbers with bit 30 set) is killed too, so the
   numbers below cannot be dodged through another calling convention;
2. ``clone3`` answers ``ENOSYS``: its flags live in memory a filter cannot read, and libc
   falls back to ``clone``, whose flags it can;
3. ``clone`` with any ``CLONE_NEW*`` namespace flag, and ``unshare`` with any, answer
   ``EPERM`` (threads and plain forks are untouched);
4. ``ioctl(TIOCSTI)`` and ``ioctl(TIOCLINUX)`` (typing into a terminal) answer ``EPERM``;
5. ``personality`` is allowed only for the harmless personas (Linux, 32-bit ``uname``,
   query) — not ``ADDR_NO_RANDOMIZE``, ``READ_IMPLIES_EXEC`` and the like;
6. every system call in :data:`DENIED` answers ``EPERM``;
7. everything else is allowed.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# --- classic BPF -----------------------------------------------------------------------------

BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
OFF_NR = 0
OFF_ARCH = 4


def arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument ``index`` (little-endian hosts only)."""
    return 16 + 8 * index


@dataclass(frozen=True, slots=True)
class Insn:
    code: int
    jt: int
    jf: int
    k: int

    def pack(self) -> bytes:
        return struct.pack("=HBBI", self.code, self.jt, self.jf, self.k)


def errno_ret(err: int) -> int:
    return SECCOMP_RET_ERRNO | (err & 0xFFFF)


# --- the rules -------------------------------------------------------------------------------

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

CLONE_NEWTIME = 0x00000080
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# clone(2)'s low byte is the exit signal, so CLONE_NEWTIME (0x80) cannot be tested there.
CLONE_NS_FLAGS = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
)
UNSHARE_NS_FLAGS = CLONE_NS_FLAGS | CLONE_NEWTIME

TIOCSTI = 0x5412
TIOCLINUX = 0x541C

# personality(2) values that are allowed (the same short list Docker's default profile uses).
PERSONALITY_ALLOWED = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

# System calls that always answer EPERM, with why (docs/sandbox.md repeats this table).
DENIED: dict[str, str] = {
    "keyctl": "kernel keyring: shared across namespaces, frequent CVEs",
    "add_key": "kernel keyring",
    "request_key": "kernel keyring",
    "bpf": "eBPF programs and maps",
    "perf_event_open": "performance counters: kernel pointers, frequent CVEs",
    "userfaultfd": "widely used to win kernel races in exploits",
    "kexec_load": "replace the running kernel",
    "kexec_file_load": "replace the running kernel",
    "init_module": "load kernel modules",
    "finit_module": "load kernel modules",
    "delete_module": "unload kernel modules",
    "mount": "new mounts (the sandbox's mounts are fixed by bwrap)",
    "umount2": "remove the sandbox's mounts",
    "pivot_root": "change the root",
    "open_tree": "new mount API",
    "move_mount": "new mount API",
    "fsopen": "new mount API",
    "fsconfig": "new mount API",
    "fsmount": "new mount API",
    "fspick": "new mount API",
    "mount_setattr": "new mount API",
    "setns": "join other namespaces",
    "ptrace": "debugging other processes (strace/gdb do not work in the sandbox)",
    "process_vm_readv": "read another process's memory",
    "process_vm_writev": "write another process's memory",
    "open_by_handle_at": "open files by handle, bypassing the mount tree (the 'shocker' escape)",
    "name_to_handle_at": "file handles (pairs with open_by_handle_at)",
    "iopl": "raw I/O port access (x86 only)",
    "ioperm": "raw I/O port access (x86 only)",
    "io_uring_setup": "io_uring: large attack surface, bypasses this filter for its ops",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    "syslog": "kernel log: kernel addresses",
}


@dataclass(frozen=True, slots=True)
class ArchTable:
    audit_arch: int
    has_x32: bool
    numbers: dict[str, int]


# Numbers from the kernel's uapi headers (asm/unistd_64.h for x86_64, asm-generic/unistd.h
# for aarch64); tests/sandbox/test_seccomp.py compares them with the headers when present.
# fmt: off
X86_64_NUMBERS = {
    "ioctl": 16, "clone": 56, "ptrace": 101, "syslog": 103, "personality": 135,
    "pivot_root": 155, "mount": 165, "umount2": 166, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
    "mount_setattr": 442,
}
AARCH64_NUMBERS = {
    "ioctl": 29, "clone": 220, "ptrace": 117, "syslog": 116, "personality": 92,
    "pivot_root": 41, "mount": 40, "umount2": 39, "init_module": 105, "delete_module": 106,
    "kexec_load": 104, "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97,
    "perf_event_open": 241, "name_to_handle_at": 264, "open_by_handle_at": 265,
    "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "finit_module": 273,
    "kexec_file_load": 294, "bpf": 280, "userfaultfd": 282, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
    "mount_setattr": 442,
}
# fmt: on

ARCHES: dict[str, ArchTable] = {
    "x86_64": ArchTable(AUDIT_ARCH_X86_64, True, X86_64_NUMBERS),
    "aarch64": ArchTable(AUDIT_ARCH_AARCH64, False, AARCH64_NUMBERS),
}


def host_arch() -> str | None:
    """The key of :data:`ARCHES` for this machine, or None when no filter is available."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if machine not in ARCHES or struct.pack("=H", 1) != b"\x01\x00":
        return None
    return machine


class _Program:
    """Builds a program with forward jumps to named labels, resolved at the end."""

    def __init__(self) -> None:
        self._insns: list[tuple[int, int | str, int | str, int]] = []
        self._labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self._labels[name] = len(self._insns)

    def load(self, offset: int) -> None:
        self._insns.append((BPF_LD_W_ABS, 0, 0, offset))

    def jump(self, code: int, k: int, jt: int | str, jf: int | str) -> None:
        self._insns.append((code, jt, jf, k))

    def ret(self, value: int) -> None:
        self._insns.append((BPF_RET_K, 0, 0, value))

    def assemble(self) -> list[Insn]:
        out: list[Insn] = []
        for index, (code, jt, jf, k) in enumerate(self._insns):
            out.append(Insn(code, self._offset(index, jt), self._offset(index, jf), k))
        return out

    def _offset(self, index: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        delta = self._labels[target] - index - 1
        if not 0 <= delta <= 255:
            raise ValueError(f"jump to {target} out of range ({delta})")
        return delta


def build_filter(arch: str) -> list[Insn]:
    table = ARCHES[arch]
    nr = table.numbers
    p = _Program()
    p.load(OFF_ARCH)
    p.jump(BPF_JEQ_K, table.audit_arch, 0, "kill")
    p.load(OFF_NR)
    if table.has_x32:
        p.jump(BPF_JGE_K, X32_SYSCALL_BIT, "kill", 0)
    p.jump(BPF_JEQ_K, nr["clone3"], "enosys", 0)
    p.jump(BPF_JEQ_K, nr["clone"], "clone", 0)
    p.jump(BPF_JEQ_K, nr["unshare"], "unshare", 0)
    p.jump(BPF_JEQ_K, nr["ioctl"], "ioctl", 0)
    p.jump(BPF_JEQ_K, nr["personality"], "personality", 0)
    for name in DENIED:
        if name in nr:
            p.jump(BPF_JEQ_K, nr[name], "eperm", 0)
    p.ret(SECCOMP_RET_ALLOW)

    p.label("clone")
    p.load(arg_low(0))
    p.jump(BPF_JSET_K, CLONE_NS_FLAGS, "eperm", "allow")
    p.label("unshare")
    p.load(arg_low(0))
    p.jump(BPF_JSET_K, UNSHARE_NS_FLAGS, "eperm", "allow")
    p.label("ioctl")
    p.load(arg_low(1))
    p.jump(BPF_JEQ_K, TIOCSTI, "eperm", 0)
    p.jump(BPF_JEQ_K, TIOCLINUX, "eperm", "allow")
    p.label("personality")
    p.load(arg_low(0))
    for value in PERSONALITY_ALLOWED:
        p.jump(BPF_JEQ_K, value, "allow", 0)
    p.label("eperm")
    p.ret(errno_ret(errno.EPERM))
    p.label("allow")
    p.ret(SECCOMP_RET_ALLOW)
    p.label("enosys")
    p.ret(errno_ret(errno.ENOSYS))
    p.label("kill")
    p.ret(SECCOMP_RET_KILL_PROCESS)
    return p.assemble()


def compile_filter(arch: str) -> bytes:
    """The program as ``bwrap --seccomp`` reads it: packed ``struct sock_filter`` array."""
    return b"".join(insn.pack() for insn in build_filter(arch))


def filter_fd(program: bytes) -> int:
    """A file descriptor positioned at the start of ``program`` (a memfd), for ``pass_fds``.

    The caller closes it once the child has started.
    """
    fd = os.memfd_create("pronghorn-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
