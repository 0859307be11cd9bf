"""Snapshots of a thread's folders and their comparison: what was created, modified and
deleted, with unified diffs of text files, and the bounds and refusals (binary, large,
secrets-looking names, links never followed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deerflow_b.shapes_b import (
    DIFF_REASONS,
    FILE_STATUSES,
    WORKSPACE_FILE,
    WORKSPACE_SUMMARY,
    check_shape,
)
from pronghorn.sandbox import workspace_scan as scan


def _roots(tmp_path: Path) -> dict[str, Path]:
    roots = {"workspace": tmp_path / "workspace", "outputs": tmp_path / "outputs"}
    for root in roots.values():
        root.mkdir()
    return roots


def test_created_modified_deleted_with_diffs(tmp_path: Path) -> None:
    roots = _roots(tmp_path)
    ws, out = roots["workspace"], roots["outputs"]
    (ws / "notes.md").write_text("one\ntwo\nthree\n")
    (ws / "old.txt").write_text("bye\n")
    (ws / "same.txt").write_text("same\n")
    before = scan.snapshot(roots)

    (ws / "notes.md").write_text("one\n2\nthree\nfour\n")
    (ws / "old.txt").unlink()
    (out / "sub").mkdir()
    (out / "sub" / "report.md").write_text("# Report\n")
    after = scan.snapshot(roots, before)
    assert after.files["workspace/same.txt"] is before.files["workspace/same.txt"]

    result = scan.compare(before, after, roots)
    check_shape(result["summary"], WORKSPACE_SUMMARY)
    by_path = {f["path"]: f for f in result["files"]}
    for entry in result["files"]:
        check_shape(entry, WORKSPACE_FILE)
        assert entry["status"] in FILE_STATUSES
        assert entry["diff_unavailable_reason"] in DIFF_REASONS
    assert set(by_path) == {
        "/mnt/user-data/workspace/notes.md",
        "/mnt/user-data/workspace/old.txt",
        "/mnt/user-data/outputs/sub/report.md",
    }
    notes = by_path["/mnt/user-data/workspace/notes.md"]
    assert notes["status"] == "modified" and notes["root"] == "workspace"
    assert (notes["additions"], notes["deletions"]) == (2, 1)
    assert "-two\n" in notes["diff"] and "+2\n" in notes["diff"] and "+four\n" in notes["diff"]
    assert notes["sha256_before"] != notes["sha256_after"]
    old = by_path["/mnt/user-data/workspace/old.txt"]
    assert old["status"] == "deleted" and old["size_after"] is None and "-bye" in old["diff"]
    report = by_path["/mnt/user-data/outputs/sub/report.md"]
    assert report["status"] == "created" and report["size_before"] is None
    assert report["additions"] == 1 and report["root"] == "outputs"
    assert result["summary"] == {
        "created": 1,
        "modified": 1,
        "deleted": 1,
        "symlink_created": 0,
        "additions": 3,
        "deletions": 2,
        "truncated": False,
    }
    assert result["limits"]["max_total_diff_bytes"] == scan.MAX_TOTAL_DIFF_BYTES


def test_no_diff_for_binary_large_secret_or_link(tmp_path: Path) -> None:
    roots = _roots(tmp_path)
    ws = roots["workspace"]
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workspace's\n")
    before = scan.snapshot(roots)
    (ws / "image.bin").write_bytes(b"\x89PNG\0\0data")
    (ws / "big.txt").write_text("x" * (scan.MAX_FILE_BYTES_FOR_DIFF + 10))
    (ws / ".env").write_text("API_KEY=hunter2\n")
    os.symlink(outside, ws / "link.txt")
    os.symlink(tmp_path, ws / "escape")  # a link to a folder: listed, never walked
    result = scan.compare(before, scan.snapshot(roots, before), roots)
    by_name = {f["path"].rsplit("/", 1)[-1]: f for f in result["files"]}
    assert set(by_name) == {"image.bin", "big.txt", ".env", "link.txt", "escape"}
    assert by_name["image.bin"]["diff_unavailable_reason"] == "binary"
    assert by_name["image.bin"]["binary"] is True
    assert by_name["big.txt"]["diff_unavailable_reason"] == "large"
    assert by_name["big.txt"]["sha256_after"] is not None
    env = by_name[".env"]
    assert env["sensitive"] is True and env["diff_unavailable_reason"] == "sensitive"
    assert "hunter2" not in str(result)
    link = by_name["link.txt"]
    assert link["status"] == "symlink_created" and link["symlink"] is True
    assert link["symlink_target_after"] == str(outside) and link["diff"] == ""
    assert "not the workspace's" not in str(result)
    assert result["summary"]["symlink_created"] == 2


def test_bounds_on_files_and_diff_bytes(tmp_path: Path) -> None:
    roots = _roots(tmp_path)
    ws = roots["workspace"]
    before = scan.snapshot(roots)
    line = "y" * 1000 + "\n"
    for i in range(scan.MAX_FILES + 5):  # 205 files of 200 KB: more than the diff budget
        (ws / f"f{i:03}.txt").write_text(line * 200)
    result = scan.compare(before, scan.snapshot(roots, before), roots)
    assert len(result["files"]) == scan.MAX_FILES and result["summary"]["truncated"] is True
    total = sum(len(f["diff"].encode()) for f in result["files"])
    assert 0 < total <= scan.MAX_TOTAL_DIFF_BYTES
    cut = [f for f in result["files"] if f["diff_truncated"]]
    assert cut and all(f["diff_unavailable_reason"] == "truncated" for f in cut)


def test_missing_or_linked_roots_have_no_files(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "secret.txt").write_text("x")
    os.symlink(target, tmp_path / "workspace")
    snap = scan.snapshot({"workspace": tmp_path / "workspace", "outputs": tmp_path / "nope"})
    assert snap.files == {}


def test_a_truncated_scan_lists_only_modified_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = _roots(tmp_path)
    ws = roots["workspace"]
    monkeypatch.setattr(scan, "MAX_SCANNED_FILES", 3)
    for name in ("a.txt", "c.txt", "d.txt"):
        (ws / name).write_text(name + "\n")
    before = scan.snapshot(roots)
    (ws / "b.txt").write_text("new, and pushes d.txt out of the scan\n")
    (ws / "a.txt").write_text("changed\n")
    after = scan.snapshot(roots, before)
    assert after.truncated
    result = scan.compare(before, after, roots)
    assert [(f["path"], f["status"]) for f in result["files"]] == [
        ("/mnt/user-data/workspace/a.txt", "modified")
    ]
    assert result["summary"]["truncated"] is True
