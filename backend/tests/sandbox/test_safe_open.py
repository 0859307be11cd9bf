"""Open-once under a thread root: links followed only inside the thread, never out of it,
FIFOs/sockets refused without blocking, and a folder swapped for a link while opening
never leads outside (a real race against a swapping thread)."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest

from pronghorn.sandbox import PathDeniedError, ThreadPaths
from pronghorn.sandbox import safe_open as so

OUT = "/mnt/user-data/outputs"
WS = "/mnt/user-data/workspace"


@pytest.fixture
def paths(data_dir: Path) -> ThreadPaths:
    p = ThreadPaths.for_thread(data_dir, "alice", str(uuid.uuid4()))
    p.ensure()
    return p


def read(opened: so.Opened) -> bytes:
    with opened:
        return os.pread(opened.fd, 1000, 0)


def test_opens_files_and_folders(paths: ThreadPaths) -> None:
    (paths.outputs / "sub").mkdir()
    (paths.outputs / "sub" / "a.txt").write_text("A")
    opened = so.open_file(paths, f"{OUT}/sub/a.txt")
    assert opened.virtual == f"{OUT}/sub/a.txt" and opened.info.st_size == 1
    assert read(opened) == b"A"
    with so.open_dir(paths, f"{OUT}/sub") as d:
        assert os.listdir(d.fd) == ["a.txt"]
    with so.open_dir(paths, "/mnt/user-data") as root:
        assert sorted(os.listdir(root.fd)) == ["outputs", "uploads", "workspace"]
    with pytest.raises(so.MissingPathError):
        so.open_file(paths, f"{OUT}/nope.txt")
    with pytest.raises(so.MissingPathError):
        so.open_file(paths, f"{OUT}/sub/a.txt/below")
    with pytest.raises(so.NotRegularFileError, match="directory"):
        so.open_file(paths, f"{OUT}/sub")
    with pytest.raises(so.NotRegularFileError, match="not a directory"):
        so.open_dir(paths, f"{OUT}/sub/a.txt")
    with pytest.raises(ValueError):
        so.open_file(paths, f"{OUT}/sub/a.txt", os.O_WRONLY | os.O_TRUNC)


def test_links_inside_the_thread_are_followed(paths: ThreadPaths) -> None:
    (paths.outputs / "r.md").write_text("report")
    (paths.workspace / "rel").symlink_to("../outputs/r.md")
    (paths.workspace / "virt").symlink_to(f"{OUT}/r.md")  # as made by bash in bubblewrap
    (paths.workspace / "host").symlink_to(paths.outputs / "r.md")  # isolation=none
    (paths.workspace / "dir").symlink_to("../outputs")
    (paths.workspace / "chain").symlink_to("dir/../workspace/rel")
    for name in ("rel", "virt", "host", "dir/r.md", "chain"):
        opened = so.open_file(paths, f"{WS}/{name}")
        assert opened.virtual == f"{OUT}/r.md", name
        assert read(opened) == b"report"
    assert so.real_path(paths, f"{WS}/dir") == OUT


def test_links_out_of_the_thread_are_refused(
    paths: ThreadPaths, data_dir: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    other = ThreadPaths.for_thread(data_dir, "alice", str(uuid.uuid4()))
    other.ensure()
    (other.outputs / "theirs.txt").write_text("theirs")
    links = {
        "etc": "/etc",
        "abs": str(secret),
        "up": "../../../../../../../../" + str(tmp_path).lstrip("/") + "/secret.txt",
        "peer": str(other.outputs / "theirs.txt"),
        "peer_rel": f"../../{other.thread_id}/outputs/theirs.txt",
        "root_file": "../thread-file",  # the thread root holds only the three folders
        "prefix": "/mnt/user-data-evil/x",
    }
    for name, target in links.items():
        (paths.outputs / name).symlink_to(target)
    for name in links:
        for virtual in (f"{OUT}/{name}", f"{OUT}/{name}/passwd"):
            with pytest.raises(PathDeniedError, match="outside the thread"):
                so.open_file(paths, virtual)
        with pytest.raises(PathDeniedError):
            so.open_file(paths, f"{OUT}/{name}", os.O_WRONLY | os.O_CREAT, create_dirs=True)
    assert secret.read_text() == "s3cret"


def test_link_loops_end(paths: ThreadPaths) -> None:
    (paths.workspace / "a").symlink_to("b")
    (paths.workspace / "b").symlink_to("a")
    with pytest.raises(PathDeniedError, match="more than 40 symbolic links"):
        so.open_file(paths, f"{WS}/a")


def test_create_through_links_and_missing_folders(paths: ThreadPaths) -> None:
    (paths.workspace / "later").symlink_to("../outputs/new/file.txt")  # dangling, inside
    with so.open_file(paths, f"{WS}/later", os.O_WRONLY | os.O_CREAT, create_dirs=True) as opened:
        os.write(opened.fd, b"made")
    assert (paths.outputs / "new" / "file.txt").read_text() == "made"
    with so.open_dir(paths, f"{WS}/x/y", create=True):
        pass
    assert (paths.workspace / "x" / "y").is_dir()


def test_fifo_and_socket_refused_without_blocking(paths: ThreadPaths) -> None:
    os.mkfifo(paths.workspace / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(paths.workspace)  # AF_UNIX paths are short: bind by a relative name
    try:
        sock.bind("sock")
    finally:
        os.chdir(here)
    try:
        started = time.monotonic()
        for flags in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR):
            with pytest.raises(so.NotRegularFileError, match="FIFO"):
                so.open_file(paths, f"{WS}/fifo", flags)
        for flags in (os.O_RDONLY, os.O_WRONLY):
            with pytest.raises(so.NotRegularFileError, match="socket"):
                so.open_file(paths, f"{WS}/sock", flags)
        with pytest.raises(so.NotRegularFileError):
            so.open_file_or_dir(paths, f"{WS}/fifo")
        assert time.monotonic() - started < 5
    finally:
        sock.close()


def test_ensure_leaves_a_swapped_folder_alone(paths: ThreadPaths, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (paths.uploads).rmdir()
    paths.uploads.symlink_to(outside)
    paths.ensure()  # no error, nothing created through the link
    assert paths.uploads.is_symlink() and list(outside.iterdir()) == []
    with pytest.raises(PathDeniedError):
        so.open_dir(paths, "/mnt/user-data/uploads")


def test_race_with_a_folder_swapped_for_a_link(paths: ThreadPaths, tmp_path: Path) -> None:
    """One thread flips outputs/real between a folder and a link to a folder outside
    holding a secret; opening outputs/real/secret.txt meanwhile never yields the secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("HOST-SECRET")
    real = paths.outputs / "real"
    stop = threading.Event()
    flips = 0

    def swap() -> None:
        nonlocal flips
        spare = paths.outputs / "spare"
        spare.mkdir()
        (spare / "secret.txt").write_text("thread file")
        link = paths.outputs / "link"
        link.symlink_to(outside)
        while not stop.is_set():
            os.rename(spare, real)  # real is a folder
            os.rename(real, spare)
            os.rename(link, real)  # real is a link to outside
            os.rename(real, link)
            flips += 1

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    outcomes = {"inside": 0, "refused": 0, "missing": 0}
    leaks = 0
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            try:
                data = read(so.open_file(paths, f"{OUT}/real/secret.txt"))
            except PathDeniedError:
                outcomes["refused"] += 1
                continue
            except so.MissingPathError:
                outcomes["missing"] += 1
                continue
            if b"HOST-SECRET" in data:
                leaks += 1
            else:
                outcomes["inside"] += 1
    finally:
        stop.set()
        swapper.join(5)
    assert flips > 10, flips
    assert leaks == 0, (leaks, outcomes)
    assert outcomes["inside"] > 0 and outcomes["refused"] > 0, outcomes
