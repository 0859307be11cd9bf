"""Uploads API against a live server: multi-file, duplicate names, bad names, limits (413
with nothing written), listing, deletion, and the thread's folders going with the thread."""

from __future__ import annotations

import os
import uuid

import httpx
import pytest

from files.conftest import MAX_FILE, MAX_TOTAL, new_thread, thread_dir
from support.inproc import InProcessServer


def _on_disk(srv: InProcessServer, thread_id: str) -> list[str]:
    folder = thread_dir(srv, thread_id) / "uploads"
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_upload_several_with_duplicates(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    files = [
        ("files", ("report.pdf", b"%PDF-1", "application/pdf")),
        ("files", ("report.pdf", b"%PDF-22", "application/pdf")),
        ("files", ("notes.txt", b"hello", "text/plain")),
    ]
    r = http.post(f"/api/threads/{tid}/uploads", files=files)
    assert r.status_code == 200, r.text
    got = r.json()["files"]
    assert [(f["name"], f["size"]) for f in got] == [
        ("report.pdf", 6),
        ("report (1).pdf", 7),
        ("notes.txt", 5),
    ]
    assert got[1]["virtual_path"] == "/mnt/user-data/uploads/report (1).pdf"
    assert got[1]["url"] == f"/api/threads/{tid}/artifacts/uploads/report%20%281%29.pdf"
    # a later upload of the same name gets the next free suffix
    r = http.post(f"/api/threads/{tid}/uploads", files=[("files", ("report.pdf", b"x"))])
    assert r.json()["files"][0]["name"] == "report (2).pdf"
    folder = thread_dir(srv, tid) / "uploads"
    assert (folder / "report (1).pdf").read_bytes() == b"%PDF-22"
    assert _on_disk(srv, tid) == sorted(
        ["report.pdf", "report (1).pdf", "report (2).pdf", "notes.txt"]
    )
    listing = http.get(f"/api/threads/{tid}/uploads").json()
    assert listing["limits"] == {"max_file_bytes": MAX_FILE, "max_total_bytes": MAX_TOTAL}
    assert {f["name"]: f["size"] for f in listing["files"]} == {
        "notes.txt": 5,
        "report (1).pdf": 7,
        "report (2).pdf": 1,
        "report.pdf": 6,
    }
    # the url really serves the file
    assert http.get(got[2]["url"]).content == b"hello"


def test_file_names_are_made_safe(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    names = {
        "../../etc/passwd": "passwd",
        "C:\\Users\\me\\évian 报告.txt": "évian 报告.txt",
        ".bashrc": "bashrc",
        "a\u202eb\u200bc.txt": "abc.txt",
        "  spaced.md ": "spaced.md",
    }
    files = [("files", (raw, b"x")) for raw in names]
    r = http.post(f"/api/threads/{tid}/uploads", files=files)
    assert r.status_code == 200, r.text
    assert [f["name"] for f in r.json()["files"]] == list(names.values())
    assert sorted(_on_disk(srv, tid)) == sorted(names.values())
    # control characters sent raw (httpx would percent-encode them)
    body = (
        b'--xx\r\nContent-Disposition: form-data; name="files"; filename="t\x01a\x7fb.txt"'
        b"\r\n\r\nhi\r\n--xx--\r\n"
    )
    r = http.post(
        f"/api/threads/{tid}/uploads",
        content=body,
        headers={"Content-Type": "multipart/form-data; boundary=xx"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["files"][0]["name"] == "tab.txt"


def test_bad_name_refuses_the_whole_request(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    for bad in ("...", "../", "\u200b\u202e", " . ", "dir/"):
        files = [("files", ("good.txt", b"ok")), ("files", (bad, b"x"))]
        r = http.post(f"/api/threads/{tid}/uploads", files=files)
        assert r.status_code == 400, (bad, r.text)
        assert "Invalid file name" in r.json()["detail"]
    assert _on_disk(srv, tid) == []


def test_per_file_limit_413_nothing_written(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    files = [("files", ("small.txt", b"s" * 100)), ("files", ("big.bin", b"b" * (MAX_FILE + 1)))]
    r = http.post(f"/api/threads/{tid}/uploads", files=files)
    assert r.status_code == 413
    detail = r.json()["detail"]
    assert "big.bin" in detail and str(MAX_FILE) in detail and "Nothing was uploaded" in detail
    assert _on_disk(srv, tid) == []  # no file, no temp file
    exact = http.post(f"/api/threads/{tid}/uploads", files=[("files", ("ok", b"o" * MAX_FILE))])
    assert exact.status_code == 200


def test_total_limit_413_nothing_written(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    first = [("files", (f"f{i}.bin", b"a" * 3000)) for i in range(3)]
    assert http.post(f"/api/threads/{tid}/uploads", files=first).status_code == 200
    more = [("files", ("g1.bin", b"b" * 500)), ("files", ("g2.bin", b"b" * 600))]
    r = http.post(f"/api/threads/{tid}/uploads", files=more)
    assert r.status_code == 413
    assert "total upload limit" in r.json()["detail"]
    assert _on_disk(srv, tid) == ["f0.bin", "f1.bin", "f2.bin"]
    # deleting frees room
    assert http.delete(f"/api/threads/{tid}/uploads/f0.bin").status_code == 200
    assert http.post(f"/api/threads/{tid}/uploads", files=more).status_code == 200


def test_delete_upload(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    http.post(f"/api/threads/{tid}/uploads", files=[("files", ("a b.txt", b"x"))])
    assert http.delete(f"/api/threads/{tid}/uploads/a%20b.txt").status_code == 200
    assert _on_disk(srv, tid) == []
    # (a bare ".." is resolved by the client into /api/threads/{tid}, DeerFlow's path of the
    # thread itself; sent encoded it reaches the uploads route)
    for name in ("a%20b.txt", "nope.txt", "%2e%2e", ".hidden", "%2e%2e%2fx"):
        r = http.delete(f"/api/threads/{tid}/uploads/{name}")
        assert r.status_code in (404, 405), (name, r.status_code)


def test_unknown_thread_and_bad_requests(srv: InProcessServer, http: httpx.Client) -> None:
    missing = str(uuid.uuid4())
    for method, path in (
        ("GET", "uploads"),
        ("DELETE", "uploads/x.txt"),
        ("GET", "artifacts/outputs/x.txt"),
        ("GET", "token-usage"),
    ):
        r = http.request(method, f"/api/threads/{missing}/{path}")
        assert r.status_code == 404, (method, path, r.text)
        assert missing in r.json()["detail"]
    r = http.post(f"/api/threads/{missing}/uploads", files=[("files", ("a", b"x"))])
    assert r.status_code == 404
    assert not (srv.workdir / "data" / "users" / "local" / "threads" / missing).exists()
    assert http.get("/api/threads/not-a-uuid/uploads").status_code == 422
    tid = new_thread(http)
    r = http.post(f"/api/threads/{tid}/uploads", json={"files": []})
    assert r.status_code == 415
    r = http.post(f"/api/threads/{tid}/uploads", files=[("other", ("a.txt", b"x"))])
    assert r.status_code == 400 and "field 'files'" in r.json()["detail"]
    r = http.post(
        f"/api/threads/{tid}/uploads",
        content=b'--xx\r\nContent-Disposition: form-data; name="files"; filename="a"\r\n\r\nab',
        headers={"Content-Type": "multipart/form-data; boundary=xx"},
    )
    assert r.status_code == 400
    assert _on_disk(srv, tid) == []


def test_deleting_the_thread_deletes_its_files(srv: InProcessServer, http: httpx.Client) -> None:
    tid = new_thread(http)
    http.post(f"/api/threads/{tid}/uploads", files=[("files", ("a.txt", b"x"))])
    root = thread_dir(srv, tid)
    (root / "outputs" / "r.md").write_text("r")
    assert (root / "uploads" / "a.txt").exists()
    assert http.delete(f"/api/langgraph/threads/{tid}").status_code == 204
    assert not root.exists()
    assert http.get(f"/api/threads/{tid}/uploads").status_code == 404


def test_long_names_uploaded_twice_stay_within_255_bytes(
    srv: InProcessServer, http: httpx.Client
) -> None:
    tid = new_thread(http)
    for raw in ("x" * 1000 + ".txt", "é" * 600 + ".md", "a." + "b" * 1000):
        names = []
        for _ in range(3):
            r = http.post(f"/api/threads/{tid}/uploads", files=[("files", (raw, b"1"))])
            assert r.status_code == 200, r.text
            names.append(r.json()["files"][0]["name"])
        assert len(set(names)) == 3, names
        assert all(len(n.encode()) <= 255 for n in names), [len(n.encode()) for n in names]
        assert names[1].endswith((" (1).txt", " (1).md", " (1)")), names[1]
        assert names[2].endswith((" (2).txt", " (2).md", " (2)")), names[2]
        for name in names:
            assert (thread_dir(srv, tid) / "uploads" / name).read_bytes() == b"1"


def test_uploads_folder_swapped_for_a_link_is_never_followed(
    srv: InProcessServer, http: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A command replaced uploads/ by a symlink to a host folder: uploading, listing and
    deleting refuse (409) and nothing is written, listed or deleted out there."""
    outside = tmp_path_factory.mktemp("outside-uploads")
    (outside / "keep.txt").write_text("host file")
    tid = new_thread(http)
    assert http.get(f"/api/threads/{tid}/uploads").status_code == 200  # folders exist
    uploads = thread_dir(srv, tid) / "uploads"
    uploads.rmdir()
    uploads.symlink_to(outside)
    r = http.post(f"/api/threads/{tid}/uploads", files=[("files", ("new.txt", b"x"))])
    assert r.status_code == 409 and "not a folder" in r.json()["detail"]
    assert http.get(f"/api/threads/{tid}/uploads").status_code == 409
    assert http.delete(f"/api/threads/{tid}/uploads/keep.txt").status_code == 409
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    assert http.get(f"/api/threads/{tid}/artifacts/uploads/keep.txt").status_code == 403


def test_links_and_fifos_in_uploads_are_not_listed_or_deleted(
    srv: InProcessServer, http: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside-file")
    (outside / "host.txt").write_text("host")
    tid = new_thread(http)
    http.post(f"/api/threads/{tid}/uploads", files=[("files", ("real.txt", b"r"))])
    uploads = thread_dir(srv, tid) / "uploads"
    (uploads / "link.txt").symlink_to(outside / "host.txt")
    os.mkfifo(uploads / "pipe")
    names = [f["name"] for f in http.get(f"/api/threads/{tid}/uploads").json()["files"]]
    assert names == ["real.txt"]
    assert http.delete(f"/api/threads/{tid}/uploads/link.txt").status_code == 404
    assert http.delete(f"/api/threads/{tid}/uploads/pipe").status_code == 404
    assert (outside / "host.txt").read_text() == "host"
    assert (uploads / "link.txt").is_symlink()
