"""The embedded client's uploads go through the same service as the HTTP route: a name
already taken is numbered (the old file kept, the answer naming the new one), and the
per-file and per-thread total limits refuse a file with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolation.appkit import PRINCIPALS
from memory.test_api import running
from pronghorn.client import Pronghorn
from pronghorn.runtime.errors import TooLarge

LIMITS = {"max_file_bytes": 100, "max_total_bytes": 150, "convert": {"enabled": False}}


async def test_an_existing_name_is_numbered_as_over_http(tmp_path: Path) -> None:
    async with running(tmp_path, uploads=LIMITS) as app:
        client = Pronghorn(app.runtime, principal=PRINCIPALS["alice"])
        tid = (await client.create_thread())["thread_id"]
        async with app.http("alice") as http:
            r = await http.post(f"/api/threads/{tid}/uploads", files=[("files", ("a.txt", b"1"))])
            assert r.json()["files"][0]["name"] == "a.txt"
            first = await client.upload(tid, "a.txt", b"22")
            r = await http.post(f"/api/threads/{tid}/uploads", files=[("files", ("a.txt", b"3"))])
            over_http = r.json()["files"][0]["name"]
        second = await client.upload(tid, "../a.txt", b"4444")
        assert first["filename"] == "a (1).txt"
        assert first["path"] == "/mnt/user-data/uploads/a (1).txt"
        assert over_http == "a (2).txt"
        assert second["filename"] == "a (3).txt"
        assert await client.list_uploads(tid) == [
            {"filename": "a (1).txt", "size": 2},
            {"filename": "a (2).txt", "size": 1},
            {"filename": "a (3).txt", "size": 4},
            {"filename": "a.txt", "size": 1},
        ]
        assert await client.read_artifact(tid, "uploads/a.txt") == b"1"  # the old file kept
        assert await client.read_artifact(tid, "uploads/a (1).txt") == b"22"


async def test_the_limits_hold_for_the_client(tmp_path: Path) -> None:
    async with running(tmp_path, uploads=LIMITS) as app:
        client = Pronghorn(app.runtime, principal=PRINCIPALS["alice"])
        tid = (await client.create_thread())["thread_id"]
        with pytest.raises(TooLarge, match="per-file upload limit of 100 bytes"):
            await client.upload(tid, "big.bin", b"x" * 101)
        await client.upload(tid, "one.bin", b"x" * 100)
        with pytest.raises(TooLarge, match=r"total upload limit \(50 bytes left\)"):
            await client.upload(tid, "two.bin", b"x" * 51)
        assert await client.list_uploads(tid) == [{"filename": "one.bin", "size": 100}]
