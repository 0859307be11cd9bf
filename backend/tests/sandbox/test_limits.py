"""Limits plumbing: which rlimits a command gets, the bash prologue that sets them (run for
real), the disk-usage walk behind the workspace quota, cgroup detection, and the words
that name each limit. The attacks themselves are in tests/security/test_sandbox_limits.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pronghorn.config.schema.app import SandboxLimitsConfig
from pronghorn.sandbox import cgroups, quota
from pronghorn.sandbox.limits import CgroupEvents, CommandLimits, limit_notes, plan_limits

MIB = 1024 * 1024


def test_plan_uses_cgroups_instead_of_rlimits_where_they_hold() -> None:
    cfg = SandboxLimitsConfig()
    both = plan_limits(
        cfg, quota_left=None, cgroup_pids=True, cgroup_memory=True, nproc_counts=True
    )
    assert both.nproc is None and both.address_space is None
    none = plan_limits(
        cfg, quota_left=None, cgroup_pids=False, cgroup_memory=False, nproc_counts=True
    )
    assert none.nproc == 256 and none.address_space == 2 * 1024**3
    assert none.cpu_seconds == 600 and none.file_size == 1024**3
    root = plan_limits(
        cfg, quota_left=None, cgroup_pids=False, cgroup_memory=False, nproc_counts=False
    )
    assert root.nproc is None  # RLIMIT_NPROC would not bind: not pretended


def test_plan_caps_file_size_at_what_is_left_of_the_quota() -> None:
    cfg = SandboxLimitsConfig(file_size_bytes=10 * MIB)
    left = plan_limits(
        cfg, quota_left=3 * MIB, cgroup_pids=False, cgroup_memory=False, nproc_counts=False
    )
    assert left.file_size == 3 * MIB and left.file_size_reason == "quota"
    over = plan_limits(
        cfg, quota_left=-5, cgroup_pids=False, cgroup_memory=False, nproc_counts=False
    )
    assert over.file_size == 0
    roomy = plan_limits(
        cfg, quota_left=50 * MIB, cgroup_pids=False, cgroup_memory=False, nproc_counts=False
    )
    assert roomy.file_size == 10 * MIB and roomy.file_size_reason == "file"
    off = SandboxLimitsConfig(processes=0, memory_bytes=0, cpu_seconds=0, file_size_bytes=0)
    plan = plan_limits(
        off, quota_left=None, cgroup_pids=False, cgroup_memory=False, nproc_counts=True
    )
    assert plan.describe() == {
        "processes": None,
        "address_space_bytes": None,
        "cpu_seconds": None,
        "file_size_bytes": None,
    }


def test_prologue_sets_the_limits_and_runs_the_command() -> None:
    limits = CommandLimits(nproc=77, address_space=300 * MIB, cpu_seconds=9, file_size=5 * MIB)
    argv = limits.wrap("ulimit -Hu; ulimit -Hv; ulimit -St; ulimit -Ht; ulimit -f; ulimit -c")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True).stdout
    assert out.split() == ["77", str(300 * 1024), "9", "14", str(5 * 1024), "0"]


def test_prologue_passes_the_command_as_one_argument() -> None:
    limits = CommandLimits(nproc=None, address_space=None, cpu_seconds=None, file_size=None)
    tricky = "echo \"$0\" '$1' `echo x`; echo done"
    out = subprocess.run(limits.wrap(tricky), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.split("\n")[1] == "done"


def test_prologue_refuses_to_run_when_a_limit_cannot_be_set() -> None:
    limits = CommandLimits(nproc=None, address_space=None, cpu_seconds=None, file_size=4096)
    # Raising a limit above an inherited hard limit is refused: the command must not run.
    argv = ["/bin/bash", "-c", 'ulimit -f 1 && exec "$@"', "x", *limits.wrap("echo ran")]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert out.returncode == 126 and "cannot set resource limits" in out.stderr
    assert "ran" not in out.stdout


def test_notes_name_each_limit() -> None:
    cfg = SandboxLimitsConfig(processes=5)
    limits = CommandLimits(nproc=5, address_space=MIB, cpu_seconds=3, file_size=MIB)
    notes = limit_notes(
        limits,
        cfg,
        exit_code=152,
        stderr="bash: fork: retry: Resource temporarily unavailable\nMemoryError\n",
        events=CgroupEvents(),
    )
    assert [key for key, _ in notes] == ["processes", "memory", "cpu"]
    assert "at most 5 processes" in notes[0][1]
    fsize = limit_notes(limits, cfg, exit_code=153, stderr="", events=CgroupEvents())
    assert fsize == [("file_size", fsize[0][1])] and "1 MiB" in fsize[0][1]
    oom = limit_notes(limits, cfg, exit_code=137, stderr="", events=CgroupEvents(0, 1))
    assert [key for key, _ in oom] == ["memory"] and "was killed" in oom[0][1]
    clean = limit_notes(limits, cfg, exit_code=1, stderr="no such file", events=CgroupEvents())
    assert clean == []


def test_usage_counts_allocated_blocks_once_and_does_not_follow_links(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "data").write_bytes(os.urandom(MIB))
    os.link(tmp_path / "a" / "data", tmp_path / "hardlink")
    with open(tmp_path / "sparse", "wb") as fh:
        fh.truncate(100 * MIB)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "big").write_bytes(os.urandom(2 * MIB))
    (tmp_path / "link").symlink_to(outside)
    usage = quota.measure(tmp_path)
    assert usage.complete
    assert MIB <= usage.bytes < MIB + 256 * 1024


def test_usage_walk_is_bounded(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}").write_text("x")
    usage = quota.measure(tmp_path, max_entries=10)
    assert not usage.complete and usage.entries == 11


def test_cgroup_v1_detection_here_is_real() -> None:
    support = cgroups.detect()
    if support.version is None:
        pytest.skip(f"no cgroups here: {support.reason}")
    cg = cgroups.create(support, pids_max=7, memory_max=64 * MIB, cpu_cores=0.5)
    try:
        if "pids" in cg.folders:
            assert (cg.folders["pids"] / "pids.max").read_text().strip() == "7"
        out = subprocess.run(
            cg.join_argv(["/bin/sh", "-c", "cat /proc/self/cgroup"]),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        assert cg.folders[next(iter(cg.folders))].name in out
    finally:
        assert cg.remove()
    assert not any(folder.exists() for folder in cg.folders.values())


def _fake_v2(tmp_path: Path, controllers: str, subtree: str = "") -> Path:
    (tmp_path / "cgroup.controllers").write_text(controllers)
    (tmp_path / "cgroup.subtree_control").write_text(subtree)
    (tmp_path / "cgroup.procs").write_text("")
    return tmp_path


def test_cgroup_v2_needs_pids_or_memory(tmp_path: Path) -> None:
    root = _fake_v2(tmp_path, "cpu io")
    support = cgroups._detect_v2(root, "/")
    assert support.version is None and "neither pids nor memory" in support.reason


def test_cgroup_v2_delegation_enables_the_controllers(tmp_path: Path) -> None:
    # A file tree shaped like a delegated cgroup2 folder (no cgroup2 with controllers can be
    # mounted on this machine): the leaf is made and the controllers are requested.
    root = _fake_v2(tmp_path, "cpuset cpu io memory pids")
    support = cgroups._detect_v2(root, "/")
    assert support.version == 2 and set(support.parents) == {"pids", "memory", "cpu"}
    assert (root / cgroups.GATEWAY_LEAF).is_dir()
    assert (root / "cgroup.subtree_control").read_text() == "+pids +memory +cpu"
