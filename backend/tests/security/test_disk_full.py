"""Issue 16 part 6: a full disk answers 507 with a message, on a real full filesystem.

The gateway's data directory sits on a small tmpfs that the test fills to ENOSPC; SQLite
(threads), the LangGraph store and the uploads API must each answer 507 `Insufficient
storage`, stay responsive, leave nothing half-written, and work again once space is freed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from security.conftest import assert_responsive
from support.inproc import InProcessServer
from support.live import base_config


def _until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


@contextlib.contextmanager
def _tiny_disk(where: Path, size: str = "3m") -> Iterator[Path]:
    """A real, small filesystem (tmpfs) mounted at `where`; skips when mounting is not allowed."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(disk: Path) -> Path:
    """Write a filler file until the filesystem says ENOSPC."""
    filler = disk / "filler.bin"
    chunk = b"\0" * 65536
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(chunk)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with contextlib.suppress(OSError), open(filler, "ab") as fh:
        while True:  # the last few bytes too
            fh.write(b"\0" * 512)
            fh.flush()
    return filler


def test_disk_full_answers_507_and_recovers(tmp_path: Path) -> None:
    with _tiny_disk(tmp_path / "disk") as disk:
        # In this process: the attack needs a full disk under the data dir, not a port.
        server = InProcessServer(tmp_path / "srv", base_config(data_dir=str(disk / "data")))
        server.start()
        try:
            _disk_full_attack(server, disk)
        finally:
            server.stop()


def _disk_full_attack(server: InProcessServer, disk: Path) -> None:
    with server.http(base_url=server.api, timeout=60) as http, server.http(timeout=60) as root:
        tid = http.post("/threads", json={}).json()["thread_id"]
        filler = _fill(disk)
        big = {"metadata": {"blob": "x" * 400_000}}
        with assert_responsive(server) as probes:
            r = http.post("/threads", json=big)
            assert r.status_code == 507, r.text
            assert "disk" in r.json()["detail"] and "full" in r.json()["detail"]
            put = http.put("/store/items", json={"namespace": ["d"], "key": "k", "value": big})
            assert put.status_code == 507, put.text
            upload = root.post(
                f"/api/threads/{tid}/uploads", files=[("files", ("big.bin", b"\1" * 1_000_000))]
            )
            assert upload.status_code == 507, upload.text
            probes.wait_for(2)
        assert http.post("/threads/search", json={}).status_code == 200
        filler.unlink()
        _until(lambda: http.post("/threads", json=big).status_code == 200)
        r = http.post("/threads/search", json={"limit": 100})
        assert r.status_code == 200 and len(r.json()) == 2
        listed = root.get(f"/api/threads/{tid}/uploads")
        assert listed.status_code == 200
        assert "big.bin" not in listed.text  # no partial upload left behind
