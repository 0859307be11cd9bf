"""Artifacts API: content types, Range, nosniff, attachment for active content, and
containment (``..``, encoded ``%2e%2e``, a symlink in outputs pointing at /etc/passwd)."""

from __future__ import annotations

import os

import httpx
import pytest

from files.conftest import new_thread, thread_dir
from support.inproc import InProcessServer


@pytest.fixture(scope="module")
def tid(srv: InProcessServer) -> str:
    with srv.http(base_url=srv.url) as http:
        thread_id = new_thread(http)
        http.post(
            f"/api/threads/{thread_id}/uploads", files=[("files", ("pic.png", b"\x89PNG...."))]
        )
    out = thread_dir(srv, thread_id) / "outputs"
    (out / "report.md").write_text("# Report\n" + "0123456789" * 10)
    (out / "page.html").write_text("<script>alert(1)</script>")
    (out / "logo.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (out / "sub").mkdir()
    (out / "sub" / "data.json").write_text('{"a": 1}')
    (out / "passwd").symlink_to("/etc/passwd")
    (out / "résumé.txt").write_text("unicode")
    return thread_id


def test_serves_files_with_types(http: httpx.Client, tid: str) -> None:
    base = f"/api/threads/{tid}/artifacts"
    r = http.get(f"{base}/outputs/report.md")
    assert r.status_code == 200
    assert r.text.startswith("# Report")
    assert r.headers["content-type"].startswith("text/markdown")
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-disposition"].startswith("inline")
    assert r.headers["accept-ranges"] == "bytes"
    r = http.get(f"{base}/uploads/pic.png")
    assert (r.headers["content-type"], r.content) == ("image/png", b"\x89PNG....")
    assert http.get(f"{base}/outputs/sub/data.json").json() == {"a": 1}
    # the virtual prefix is accepted too
    assert http.get(f"{base}/mnt/user-data/outputs/report.md").status_code == 200
    r = http.get(f"{base}/outputs/r%C3%A9sum%C3%A9.txt")
    assert r.text == "unicode"
    assert "filename*=utf-8''r%C3%A9sum%C3%A9.txt" in r.headers["content-disposition"]
    assert http.head(f"{base}/outputs/report.md").status_code == 200


def test_range_requests(http: httpx.Client, tid: str) -> None:
    url = f"/api/threads/{tid}/artifacts/outputs/report.md"
    r = http.get(url, headers={"Range": "bytes=2-7"})
    assert r.status_code == 206
    assert r.content == b"Report"
    assert r.headers["content-range"] == "bytes 2-7/109"
    r = http.get(url, headers={"Range": "bytes=-3"})
    assert (r.status_code, r.content) == (206, b"789")
    r = http.get(url, headers={"Range": "bytes=500-600"})
    assert r.status_code == 416


def test_active_content_is_an_attachment(http: httpx.Client, tid: str) -> None:
    base = f"/api/threads/{tid}/artifacts/outputs"
    for name, ctype in (("page.html", "text/html"), ("logo.svg", "image/svg+xml")):
        r = http.get(f"{base}/{name}")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith(ctype)
        assert r.headers["content-disposition"] == f'attachment; filename="{name}"'
        assert r.headers["x-content-type-options"] == "nosniff"
    r = http.get(f"{base}/report.md", params={"download": "1"})
    assert r.headers["content-disposition"] == 'attachment; filename="report.md"'


def test_containment(srv: InProcessServer, http: httpx.Client, tid: str) -> None:
    base = f"/api/threads/{tid}/artifacts"
    for target in (
        f"{base}/outputs/../../../../../../etc/passwd",
        f"{base}/outputs/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        f"{base}/outputs/%2E%2E%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        f"{base}/..%2f..%2f..%2fsecret",
    ):
        status, body = srv.raw_get(target)  # clients would normalise `..`
        assert status == 400, (target, status)
        assert b"root:" not in body
    # a symlink placed in outputs that points outside
    r = http.get(f"{base}/outputs/passwd")
    assert r.status_code == 403 and "root:" not in r.text
    # only the three thread folders are reachable
    assert http.get(f"{base}/etc/passwd").status_code == 403
    assert http.get(f"{base}/outputs/missing.md").status_code == 404
    assert http.get(f"{base}/outputs/sub").status_code == 404  # a folder is not a file
    other = new_thread(http)
    assert http.get(f"/api/threads/{other}/artifacts/outputs/report.md").status_code == 404


CSP = (
    "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox"
)


@pytest.fixture(scope="module")
def typed(srv: InProcessServer) -> str:
    """A thread whose outputs hold one file per interesting type, a FIFO and inner links."""
    with srv.http(base_url=srv.url) as http:
        thread_id = new_thread(http)
        http.get(f"/api/threads/{thread_id}/uploads")  # creates the folders
    out = thread_dir(srv, thread_id) / "outputs"
    for name in (
        "a.mht", "a.mhtml", "a.xyz", "noext", "a.js", "a.py", "a.xsl", "a.xhtml",
        "a.txt", "a.csv", "a.json", "a.pdf", "a.png", "a.jpg", "a.webp", "a.mp4", "a.mp3",
    ):  # fmt: skip
        (out / name).write_bytes(b"data of " + name.encode())
    os.mkfifo(out / "pipe")
    (out / "latest.txt").symlink_to("a.txt")
    (out / "dir").symlink_to("../workspace")
    (out.parent / "workspace" / "w.txt").write_text("in workspace")
    return thread_id


def test_only_passive_types_are_inline(http: httpx.Client, typed: str) -> None:
    base = f"/api/threads/{typed}/artifacts/outputs"
    attachments = ("a.mht", "a.mhtml", "a.xyz", "noext", "a.js", "a.py", "a.xsl", "a.xhtml")
    inline = ("a.txt", "a.csv", "a.json", "a.pdf", "a.png", "a.jpg", "a.webp", "a.mp4", "a.mp3")
    for name in attachments + inline:
        r = http.get(f"{base}/{name}")
        assert r.status_code == 200 and r.content == b"data of " + name.encode(), name
        kind = "attachment" if name in attachments else "inline"
        assert r.headers["content-disposition"] == f'{kind}; filename="{name}"', name
        assert r.headers["x-content-type-options"] == "nosniff"
        expected = CSP.removesuffix("; sandbox") if name == "a.pdf" else CSP
        assert r.headers["content-security-policy"] == expected, name
    assert http.get(f"{base}/a.mht").headers["content-type"] == "message/rfc822"
    assert http.get(f"{base}/noext").headers["content-type"] == "application/octet-stream"


def test_csp_and_headers_on_ranges_and_head(http: httpx.Client, tid: str) -> None:
    url = f"/api/threads/{tid}/artifacts/outputs/report.md"
    full = http.get(url)
    for r in (full, http.get(url, headers={"Range": "bytes=0-0"}), http.head(url)):
        assert r.headers["content-security-policy"] == CSP
        assert r.headers["cache-control"] == "private, no-cache"
        assert r.headers["x-content-type-options"] == "nosniff"
    head = http.head(url)
    assert head.content == b"" and head.headers["content-length"] == "109"
    assert full.headers["content-length"] == "109" and "etag" in full.headers
    r = http.get(url, headers={"Range": "bytes=500-600"})
    assert r.status_code == 416 and r.headers["content-range"] == "bytes */109"
    assert "not satisfiable" in r.json()["detail"]
    # several ranges, a malformed one, or a stale If-Range: the whole file
    for headers in (
        {"Range": "bytes=0-1,4-5"},
        {"Range": "bytes=x-y"},
        {"Range": "bytes=0-3", "If-Range": '"stale"'},
    ):
        r = http.get(url, headers=headers)
        assert r.status_code == 200 and len(r.content) == 109, headers
    r = http.get(url, headers={"Range": "bytes=0-3", "If-Range": full.headers["etag"]})
    assert (r.status_code, r.content) == (206, b"# Re")
    r = http.get(url, headers={"Range": "bytes=100-"})
    assert (r.status_code, r.headers["content-range"]) == (206, "bytes 100-108/109")


def test_links_inside_the_thread_are_served_fifos_are_not(http: httpx.Client, typed: str) -> None:
    base = f"/api/threads/{typed}/artifacts/outputs"
    r = http.get(f"{base}/latest.txt")
    assert r.status_code == 200 and r.content == b"data of a.txt"
    assert r.headers["content-disposition"] == 'inline; filename="a.txt"'
    assert http.get(f"{base}/dir/w.txt").content == b"in workspace"
    r = http.get(f"{base}/pipe", timeout=10)  # refused at once, never blocks a worker
    assert r.status_code == 404
