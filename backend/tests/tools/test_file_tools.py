"""read_file / write_file / str_replace / ls / glob / grep against a real local sandbox."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from tools.conftest import MakeKit, ToolKit

OUT = "/mnt/user-data/outputs"
WS = "/mnt/user-data/workspace"


async def test_write_then_read_numbered(kit: ToolKit) -> None:
    msg = await kit.text("write_file", description="d", path=f"{OUT}/a.txt", content="one\ntwo\n")
    assert msg == f"Wrote 8 characters to {OUT}/a.txt."
    assert (kit.paths.outputs / "a.txt").read_text() == "one\ntwo\n"
    await kit.text("write_file", description="d", path=f"{OUT}/a.txt", content="3\n", append=True)
    text = await kit.text("read_file", description="d", path=f"{OUT}/a.txt")
    assert text == "     1\tone\n     2\ttwo\n     3\t3"


async def test_read_range_and_relative_path(kit: ToolKit) -> None:
    body = "".join(f"line {i}\n" for i in range(1, 21))
    await kit.text("write_file", description="d", path="notes/n.txt", content=body)
    assert (kit.paths.workspace / "notes" / "n.txt").exists()
    text = await kit.text(
        "read_file", description="d", path="notes/n.txt", start_line=5, end_line=7
    )
    assert text.splitlines() == ["     5\tline 5", "     6\tline 6", "     7\tline 7"]
    past = await kit.text("read_file", description="d", path="notes/n.txt", start_line=50)
    assert "fewer than 50 lines" in past
    bad = await kit.error(
        "read_file", description="d", path="notes/n.txt", start_line=5, end_line=2
    )
    assert "Invalid line range" in bad


async def test_read_truncates_long_files(make_kit: MakeKit) -> None:
    kit = make_kit(sandbox={"max_output_chars": 1000})
    body = "".join(f"{i:04d} " + "x" * 94 + "\n" for i in range(50))  # 100 chars a line
    await kit.text("write_file", description="d", path="big.txt", content=body)
    text = await kit.text("read_file", description="d", path="big.txt")
    assert "truncated at 1000 characters" in text
    assert "start_line/end_line" in text
    assert text.splitlines()[0].startswith("     1\t0000 ")
    assert len(text) < 1400


async def test_missing_and_denied_paths(kit: ToolKit) -> None:
    missing = await kit.error("read_file", description="d", path=f"{WS}/nope.txt")
    assert "File not found" in missing
    for bad in ("/etc/passwd", "../../../etc/passwd", f"{OUT}/../../../../etc/passwd", "~/x"):
        err = await kit.error("read_file", description="d", path=bad)
        assert "Access denied" in err
        assert str(kit.deps.data_dir) not in err  # never a host path
    target = Path(f"/tmp/pronghorn-evil-{uuid.uuid4().hex}.txt")
    err = await kit.error("write_file", description="d", path=str(target), content="x")
    assert "Access denied" in err
    assert not await asyncio.to_thread(target.exists)


async def test_symlink_escape_is_denied(kit: ToolKit) -> None:
    await kit.text("ls", description="d", path="/mnt/user-data")  # creates the folders
    (kit.paths.outputs / "link").symlink_to("/etc/passwd")
    err = await kit.error("read_file", description="d", path=f"{OUT}/link")
    assert "Access denied" in err


async def test_str_replace(kit: ToolKit) -> None:
    path = f"{WS}/code.py"
    await kit.text("write_file", description="d", path=path, content="a = 1\nb = 1\n")
    msg = await kit.text(
        "str_replace", description="d", path=path, old_str="a = 1", new_str="a = 2"
    )
    assert msg == f"Replaced 1 occurrence in {path}."
    ambiguous = await kit.error(
        "str_replace", description="d", path=path, old_str="= ", new_str="="
    )
    assert "occurs 2 times" in ambiguous
    msg = await kit.text(
        "str_replace", description="d", path=path, old_str="= ", new_str="=", replace_all=True
    )
    assert msg == f"Replaced 2 occurrences in {path}."
    assert (kit.paths.workspace / "code.py").read_text() == "a =2\nb =1\n"
    missing = await kit.error("str_replace", description="d", path=path, old_str="zz", new_str="")
    assert "not found" in missing


async def test_ls_glob_grep(kit: ToolKit) -> None:
    await kit.text("write_file", description="d", path="src/a.py", content="def f():\n    pass\n")
    await kit.text("write_file", description="d", path="src/b.md", content="f is great\n")
    listing = await kit.text("ls", description="d", path="/mnt/user-data")
    assert f"{WS}/" in listing.splitlines() and f"{WS}/src/" in listing.splitlines()
    empty = await kit.text("ls", description="d", path=OUT)
    assert empty == f"{OUT} is empty."
    assert await kit.text("glob", pattern="**/*.py") == f"{WS}/src/a.py"
    none = await kit.text("glob", pattern="*.rs")
    assert none.startswith("No files match")
    hits = await kit.text("grep", pattern=r"\bf\b")
    assert hits.splitlines() == [f"{WS}/src/a.py:1: def f():", f"{WS}/src/b.md:1: f is great"]
    only_md = await kit.text("grep", pattern="f", glob="*.md")
    assert only_md.splitlines() == [f"{WS}/src/b.md:1: f is great"]
    bad = await kit.error("grep", pattern="(")
    assert "Invalid regular expression" in bad
    denied = await kit.error("glob", pattern="../*")
    assert "may not contain '..'" in denied


async def test_grep_reports_its_cap(kit: ToolKit) -> None:
    await kit.text("write_file", description="d", path="many.txt", content="hit\n" * 300)
    hits = (await kit.text("grep", pattern="hit")).splitlines()
    assert len(hits) == 201
    assert "stopped at 200 matches" in hits[-1]
