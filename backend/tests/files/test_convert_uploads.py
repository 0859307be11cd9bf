"""Uploaded documents get a Markdown copy beside them (markitdown in a separate process):
real DOCX/XLSX/PPTX/PDF files, a corrupt one that fails alone, the listing and deletion
of the pair, and the converter's bounds (time, memory, output size, no network)."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from files.conftest import new_thread, thread_dir
from pronghorn.config.schema.app import UploadConvertConfig
from pronghorn.sandbox import bwrap as bw
from pronghorn.sandbox.convert import DocumentConverter, _bwrap_argv
from pronghorn.sandbox.uploads import UploadsFolder
from support import documents
from support.inproc import InProcessServer
from support.live import base_config

# generous: the machine running the tests may be loaded
CONVERT = {"timeout_s": 300}


@pytest.fixture(scope="module")
def docs_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    config = base_config(uploads={"convert": CONVERT})
    server = InProcessServer(tmp_path_factory.mktemp("convert"), config).start()
    yield server
    server.stop()


def test_documents_get_markdown_copies_and_a_bad_one_fails_alone(
    docs_srv: InProcessServer,
) -> None:
    files = [
        ("files", ("brief.docx", documents.docx("Budget is 4711 pronghorns.", heading="Plan"))),
        ("files", ("sheet.xlsx", documents.xlsx([["city", "count"], ["Lima", 17]]))),
        ("files", ("deck.pptx", documents.pptx("Quarterly", "Revenue grew 12 percent"))),
        ("files", ("scan.pdf", documents.pdf("Invoice number 99-AB", "Total due 314"))),
        ("files", ("broken.docx", b"PK\x03\x04 this is not a real zip")),
        ("files", ("notes.txt", b"plain text stays as it is")),
    ]
    with docs_srv.http(base_url=docs_srv.url, timeout=900) as http:
        tid = new_thread(http)
        r = http.post(f"/api/threads/{tid}/uploads", files=files)
        assert r.status_code == 200, r.text
        got = {f["name"]: f for f in r.json()["files"]}
        assert list(got) == [f[1][0] for f in files]  # every file stored, in order
        folder = thread_dir(docs_srv, tid) / "uploads"

        def copy(name: str) -> str:
            entry = got[name]["markdown"]
            assert entry["name"] == f"{name}.md"
            assert entry["virtual_path"] == f"/mnt/user-data/uploads/{name}.md"
            assert entry["truncated"] is False
            return (folder / entry["name"]).read_text()

        assert "# Plan" in copy("brief.docx") and "4711 pronghorns" in copy("brief.docx")
        assert "| city | count |" in copy("sheet.xlsx") and "Lima" in copy("sheet.xlsx")
        assert "Quarterly" in copy("deck.pptx") and "Revenue grew 12" in copy("deck.pptx")
        assert "Invoice number 99-AB" in copy("scan.pdf")
        # the copy is served like any upload
        assert "4711" in http.get(got["brief.docx"]["markdown"]["url"]).text

        broken = got["broken.docx"]
        assert broken["markdown"] is None
        assert "not a readable document" in broken["conversion_error"]
        assert (folder / "broken.docx").read_bytes().startswith(b"PK")  # still uploaded
        assert got["notes.txt"]["markdown"] is None
        assert got["notes.txt"]["conversion_error"] is None

        listing = {f["name"]: f for f in http.get(f"/api/threads/{tid}/uploads").json()["files"]}
        assert "brief.docx.md" not in listing  # a copy is shown with its original
        assert listing["brief.docx"]["markdown"]["name"] == "brief.docx.md"
        assert listing["broken.docx"]["markdown"] is None

        assert http.delete(f"/api/threads/{tid}/uploads/brief.docx").status_code == 200
        assert not (folder / "brief.docx.md").exists()


def test_a_user_file_named_like_a_copy_is_listed_alone(docs_srv: InProcessServer) -> None:
    with docs_srv.http(base_url=docs_srv.url, timeout=60) as http:
        tid = new_thread(http)
        r = http.post(f"/api/threads/{tid}/uploads", files=[("files", ("x.md", b"# mine"))])
        assert r.json()["files"][0]["markdown"] is None
        names = [f["name"] for f in http.get(f"/api/threads/{tid}/uploads").json()["files"]]
        assert names == ["x.md"]


# --- the converter's bounds, without a server ------------------------------------------------


def _convert(tmp_path: Path, name: str, data: bytes, **config: object) -> tuple[object, Path]:
    (tmp_path / name).write_bytes(data)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    cfg = UploadConvertConfig.model_validate({**CONVERT, **config})

    async def go() -> object:
        with UploadsFolder(fd) as folder:
            return await DocumentConverter().convert_upload(folder, name, cfg)

    return asyncio.run(go()), tmp_path / f"{name}.md"


def test_conversion_past_its_time_is_stopped(tmp_path: Path) -> None:
    # importing the converter alone takes longer than this
    done, copy = _convert(tmp_path, "a.docx", documents.docx("x"), timeout_s=0.05)
    assert "longer than 0.05 s" in str(done.error)  # type: ignore[attr-defined]
    assert not copy.exists()


def test_conversion_past_its_memory_fails(tmp_path: Path) -> None:
    # an 8 MB page: its parse tree needs well over the floor's 512 MiB (the converter's own
    # imports take ~280 MiB; a small page converts within the floor, as the next test shows)
    page = "<html><body>" + "<p>line of text number</p>" * 310_000 + "</body></html>"
    done, copy = _convert(tmp_path, "big.html", page.encode(), memory_bytes=512 * 1024**2)
    assert "more memory than 512 MiB" in str(done.error), done  # type: ignore[attr-defined]
    assert not copy.exists()


def test_a_small_document_converts_within_the_memory_floor(tmp_path: Path) -> None:
    done, copy = _convert(tmp_path, "a.docx", documents.docx("x"), memory_bytes=512 * 1024**2)
    assert done.error is None, done  # type: ignore[attr-defined]
    assert copy.read_text().strip() == "x"


def test_long_output_is_cut_and_says_so(tmp_path: Path) -> None:
    page = "<html><body>" + "<p>line of text number</p>" * 4000 + "</body></html>"
    done, copy = _convert(tmp_path, "big.html", page.encode(), max_output_bytes=2048)
    assert done.truncated is True, done  # type: ignore[attr-defined]
    text = copy.read_text()
    assert len(text.encode()) < 2048 + 200
    assert text.rstrip().endswith("(uploads.convert.max_output_bytes)]")


@pytest.mark.skipif(bw.find_bwrap() is None, reason="bubblewrap is not installed")
def test_converter_sandbox_has_no_network(tmp_path: Path) -> None:
    """The worker's bubblewrap command line: a listener on this host's loopback cannot be
    reached from inside (the network namespace is its own)."""
    ok, reason = asyncio.run(bw.probe(bw.find_bwrap() or "", network=False))
    if not ok:
        pytest.skip(f"bubblewrap does not work here: {reason}")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = (
            "import socket,sys\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
            "except OSError as e:\n"
            "    print('refused', e); sys.exit(0)\n"
            "print('connected'); sys.exit(1)\n"
        )
        argv = _bwrap_argv(bw.find_bwrap() or "", [sys.executable, "-I", "-c", probe])

        async def run() -> tuple[int | None, bytes]:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, env={}
            )
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            return proc.returncode, out

        code, out = asyncio.run(run())
    assert code == 0 and out.startswith(b"refused"), out
