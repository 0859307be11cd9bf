"""Uploads as DeerFlow's composer uses them (core/uploads/api.ts): limits asked before the
thread exists, and the POST/DELETE/list answers in its shapes (ours kept beside)."""

from __future__ import annotations

import uuid

from deerflow.conftest import StartApp
from deerflow.shapes import (
    DELETE_UPLOAD_RESPONSE,
    LIST_FILES_RESPONSE,
    UPLOAD_LIMITS,
    UPLOAD_RESPONSE,
    assert_shape,
)


async def test_limits_before_the_thread_exists(make_app: StartApp) -> None:
    app = await make_app()
    new_chat = str(uuid.uuid4())  # DeerFlow's id for a new chat, not created yet
    async with app.http("alice") as http:
        r = await http.get(f"/api/threads/{new_chat}/uploads/limits")
        assert r.status_code == 200, r.text
        assert_shape(r.json(), UPLOAD_LIMITS)
        assert r.json() == {"max_files": 1000, "max_file_size": 4096, "max_total_size": 10_000}
        assert (await http.get("/api/threads/not-an-id/uploads/limits")).status_code == 422
    async with app.http(None) as http:  # still signed-in callers only
        assert (await http.get(f"/api/threads/{new_chat}/uploads/limits")).status_code == 401


async def test_upload_list_delete_shapes(make_app: StartApp) -> None:
    app = await make_app()
    tid = (await app.sdk("alice").threads.create())["thread_id"]
    async with app.http("alice") as http:
        up = await http.post(
            f"/api/threads/{tid}/uploads", files={"files": ("Notes.TXT", b"hello", "text/plain")}
        )
        assert up.status_code == 200, up.text
        body = up.json()
        assert_shape(body, UPLOAD_RESPONSE)
        (f,) = body["files"]
        assert body["success"] is True and body["skipped_files"] == []
        assert f["filename"] == "Notes.TXT" == f["name"] and f["extension"] == "txt"
        assert f["path"] == f["virtual_path"] == "/mnt/user-data/uploads/Notes.TXT"
        assert f["artifact_url"] == f["url"]
        assert_shape(
            (await http.get(f"/api/threads/{tid}/uploads/list")).json(), LIST_FILES_RESPONSE
        )
        gone = await http.delete(f"/api/threads/{tid}/uploads/Notes.TXT")
        assert gone.status_code == 200, gone.text
        assert_shape(gone.json(), DELETE_UPLOAD_RESPONSE)
        assert gone.json()["success"] is True
        assert (await http.delete(f"/api/threads/{tid}/uploads/Notes.TXT")).status_code == 404
