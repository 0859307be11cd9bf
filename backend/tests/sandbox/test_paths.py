"""Virtual ↔ host path mapping and its containment rules."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from pronghorn.sandbox import PathDeniedError, ThreadPaths, delete_thread_dirs
from pronghorn.sandbox.paths import validate_thread_id, validate_user_id


@pytest.fixture
def paths(data_dir: Path, thread_id: str) -> ThreadPaths:
    p = ThreadPaths.for_thread(data_dir, "alice", thread_id)
    p.ensure()
    return p


def test_layout(data_dir: Path, thread_id: str, paths: ThreadPaths) -> None:
    root = data_dir.resolve() / "users" / "alice" / "threads" / thread_id
    assert paths.root == root
    assert paths.workspace == root / "workspace"
    assert paths.uploads == root / "uploads"
    assert paths.outputs == root / "outputs"
    assert all(p.is_dir() for p in (paths.workspace, paths.uploads, paths.outputs))


def test_relative_data_dir_is_made_absolute(tmp_path: Path, thread_id: str) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        p = ThreadPaths.for_thread("rel/data", "bob", thread_id)
    finally:
        os.chdir(cwd)
    assert p.root.is_absolute()
    assert p.root == tmp_path.resolve() / "rel/data/users/bob/threads" / thread_id


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "a b", "x" * 65, "ü", "a\x00"])
def test_bad_user_ids_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        validate_user_id(bad)


@pytest.mark.parametrize(
    "bad",
    ["", "not-a-uuid", "../" + str(uuid.UUID(int=1)), str(uuid.UUID(int=2)) + "/..", "1" * 36],
)
def test_bad_thread_ids_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        validate_thread_id(bad)


def test_thread_id_canonical_lower_case(data_dir: Path) -> None:
    tid = str(uuid.uuid4())
    assert ThreadPaths.for_thread(data_dir, "a", tid.upper()).thread_id == tid


@pytest.mark.parametrize(
    ("virtual", "expected"),
    [
        ("/mnt/user-data/workspace/a.txt", "workspace/a.txt"),
        ("/mnt/user-data/uploads/doc.pdf", "uploads/doc.pdf"),
        ("/mnt/user-data/outputs/sub/r.md", "outputs/sub/r.md"),
        ("a.txt", "workspace/a.txt"),
        ("./src/x.py", "workspace/src/x.py"),
        ("sub/../b.txt", "workspace/b.txt"),
        ("/mnt/user-data/workspace/../outputs/o.txt", "outputs/o.txt"),
        ("/mnt/user-data", ""),
    ],
)
def test_resolve_virtual(paths: ThreadPaths, virtual: str, expected: str) -> None:
    assert paths.resolve_virtual(virtual) == (paths.root / expected).resolve()


@pytest.mark.parametrize(
    "virtual",
    [
        "../secret",
        "../../../../etc/passwd",
        "/mnt/user-data/workspace/../../../etc/passwd",
        "/mnt/user-data/../user-data2/x",
        "/etc/shadow",
        "/mnt/other/x",
        "/mnt/user-data/other-folder/x",
        "~/x",
        "a\x00b",
        "",
    ],
)
def test_escapes_refused(paths: ThreadPaths, virtual: str) -> None:
    with pytest.raises(PathDeniedError) as err:
        paths.resolve_virtual(virtual)
    assert str(paths.root) not in str(err.value)


def test_absolute_host_path_refused_even_inside_thread(paths: ThreadPaths) -> None:
    with pytest.raises(PathDeniedError, match="outside /mnt/user-data"):
        paths.resolve_virtual(str(paths.workspace / "a.txt"))


def test_message_readable_by_model(paths: ThreadPaths) -> None:
    with pytest.raises(PathDeniedError) as err:
        paths.resolve_virtual("/etc/passwd")
    message = str(err.value)
    assert "/etc/passwd" in message and "/mnt/user-data/workspace" in message


def test_symlink_out_of_thread_refused(paths: ThreadPaths, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret")
    (paths.workspace / "link").symlink_to(outside)
    (paths.workspace / "etc").symlink_to("/etc")
    (paths.workspace / "dangling").symlink_to(tmp_path / "does-not-exist-yet")
    for virtual in ("link/secret.txt", "link", "etc/passwd", "dangling", "dangling/new.txt"):
        with pytest.raises(PathDeniedError, match="outside the thread"):
            paths.resolve_virtual(virtual)


def test_symlink_to_other_thread_refused(paths: ThreadPaths, data_dir: Path) -> None:
    other = ThreadPaths.for_thread(data_dir, "alice", str(uuid.uuid4()))
    other.ensure()
    (paths.workspace / "peek").symlink_to(other.workspace)
    with pytest.raises(PathDeniedError):
        paths.resolve_virtual("peek")


def test_symlink_within_thread_allowed(paths: ThreadPaths) -> None:
    (paths.workspace / "out").symlink_to(paths.outputs)
    assert paths.resolve_virtual("out/x.md") == paths.outputs.resolve() / "x.md"


def test_to_virtual(paths: ThreadPaths, tmp_path: Path) -> None:
    assert paths.to_virtual(paths.outputs / "r.md") == "/mnt/user-data/outputs/r.md"
    assert paths.to_virtual(paths.root) == "/mnt/user-data"
    assert paths.to_virtual(paths.resolve_virtual("a/b.txt")) == "/mnt/user-data/workspace/a/b.txt"
    with pytest.raises(PathDeniedError):
        paths.to_virtual(tmp_path / "elsewhere.txt")
    with pytest.raises(PathDeniedError):
        paths.to_virtual(paths.root / ".." / "x")


async def test_delete_thread_dirs(paths: ThreadPaths, data_dir: Path, tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "k.txt").write_text("keep me")
    (paths.workspace / "f.txt").write_text("x")
    (paths.workspace / "link").symlink_to(keep)
    other = ThreadPaths.for_thread(data_dir, "alice", str(uuid.uuid4()))
    other.ensure()

    assert await delete_thread_dirs(data_dir, "alice", paths.thread_id) is True
    assert not paths.root.exists()
    assert (keep / "k.txt").read_text() == "keep me"  # the link was not followed
    assert other.workspace.is_dir()  # other threads untouched
    assert await delete_thread_dirs(data_dir, "alice", paths.thread_id) is False
    with pytest.raises(ValueError):
        await delete_thread_dirs(data_dir, "..", paths.thread_id)
