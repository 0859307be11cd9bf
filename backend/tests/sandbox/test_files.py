"""File tools: read/write/str_replace/ls/glob/grep, with containment on every path — a
conformance suite: each test runs on the local and on the container provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from pronghorn.sandbox import PathDeniedError, Sandbox, SandboxError

WS = "/mnt/user-data/workspace"


async def test_write_then_read(host_sandbox: Sandbox) -> None:
    await host_sandbox.write_file("notes/a.txt", "one\ntwo\nthree\nfour\n")
    assert (host_sandbox.thread_paths.workspace / "notes/a.txt").is_file()
    assert await host_sandbox.read_file(f"{WS}/notes/a.txt") == "one\ntwo\nthree\nfour\n"
    assert await host_sandbox.read_file("notes/a.txt", 2, 3) == "two\nthree\n"
    assert await host_sandbox.read_file("notes/a.txt", start_line=4) == "four\n"
    assert await host_sandbox.read_file("notes/a.txt", end_line=1) == "one\n"
    await host_sandbox.write_file("notes/a.txt", "five\n", append=True)
    assert (await host_sandbox.read_file("notes/a.txt")).endswith("four\nfive\n")
    await host_sandbox.write_file("/mnt/user-data/outputs/r.md", "# r")
    assert (host_sandbox.thread_paths.outputs / "r.md").read_text() == "# r"


async def test_read_errors(host_sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError, match="File not found: /mnt/user-data/workspace/nope"):
        await host_sandbox.read_file("nope")
    with pytest.raises(SandboxError, match="is a directory"):
        await host_sandbox.read_file(WS)
    (host_sandbox.thread_paths.workspace / "b.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(SandboxError, match="binary"):
        await host_sandbox.read_file("b.bin")
    await host_sandbox.write_file("x.txt", "a\n")
    with pytest.raises(SandboxError, match="line range"):
        await host_sandbox.read_file("x.txt", 3, 1)


async def test_read_is_capped(host_sandbox: Sandbox) -> None:
    big = "x" * 100 + "\n"
    await host_sandbox.write_file("big.txt", big * 2000)  # 202 000 chars; cap is 30 000
    text = await host_sandbox.read_file("big.txt")
    assert len(text) < 30_500
    assert "truncated at 30000 characters" in text


async def test_reads_and_writes_outside_refused(host_sandbox: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    (host_sandbox.thread_paths.workspace / "link").symlink_to(tmp_path)
    for path in ("/etc/shadow", "/etc/passwd", "../../x", str(secret), "link/secret.txt"):
        with pytest.raises(PathDeniedError):
            await host_sandbox.read_file(path)
        with pytest.raises(PathDeniedError):
            await host_sandbox.write_file(path, "pwned")
    assert secret.read_text() == "s3cret"
    with pytest.raises(PathDeniedError):
        await host_sandbox.list_dir("/etc")
    with pytest.raises(PathDeniedError):
        await host_sandbox.grep("root", path="/etc")


async def test_write_refuses_thread_root(host_sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError):
        await host_sandbox.write_file("/mnt/user-data/file.txt", "x")
    with pytest.raises(SandboxError, match="directory"):
        await host_sandbox.write_file(WS, "x")


async def test_str_replace(host_sandbox: Sandbox) -> None:
    await host_sandbox.write_file("c.py", "a = 1\nb = 1\nc = 2\n")
    with pytest.raises(SandboxError, match="not found"):
        await host_sandbox.str_replace("c.py", "zzz", "y")
    with pytest.raises(SandboxError, match="occurs 2 times"):
        await host_sandbox.str_replace("c.py", "= 1", "= 3")
    with pytest.raises(SandboxError, match="empty"):
        await host_sandbox.str_replace("c.py", "", "y")
    with pytest.raises(SandboxError, match="File not found"):
        await host_sandbox.str_replace("missing.py", "a", "b")
    assert await host_sandbox.str_replace("c.py", "c = 2", "c = 5") == 1
    assert await host_sandbox.str_replace("c.py", "= 1", "= 3", replace_all=True) == 2
    assert await host_sandbox.read_file("c.py") == "a = 3\nb = 3\nc = 5\n"


async def test_list_dir(host_sandbox: Sandbox) -> None:
    for p in ("a/b/c/deep.txt", "a/top.txt", "z.txt"):
        await host_sandbox.write_file(p, "x")
    listing = await host_sandbox.list_dir(WS)
    assert listing == [
        f"{WS}/a/",
        f"{WS}/a/b/",
        f"{WS}/a/top.txt",
        f"{WS}/z.txt",
    ]
    deep = await host_sandbox.list_dir(WS, max_depth=4)
    assert f"{WS}/a/b/c/deep.txt" in deep
    assert await host_sandbox.list_dir("/mnt/user-data", max_depth=1) == [
        "/mnt/user-data/outputs/",
        "/mnt/user-data/uploads/",
        "/mnt/user-data/workspace/",
    ]
    with pytest.raises(SandboxError, match="not found"):
        await host_sandbox.list_dir("nope")


async def test_glob(host_sandbox: Sandbox, tmp_path: Path) -> None:
    for p in ("src/a.py", "src/pkg/b.py", "src/c.txt", "d.py"):
        await host_sandbox.write_file(p, "x")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "leak.py").write_text("x")
    (host_sandbox.thread_paths.workspace / "out").symlink_to(tmp_path / "o")
    assert await host_sandbox.glob("**/*.py") == [
        f"{WS}/d.py",
        f"{WS}/src/a.py",
        f"{WS}/src/pkg/b.py",
    ]
    assert await host_sandbox.glob("*.py", path=f"{WS}/src") == [f"{WS}/src/a.py"]
    assert await host_sandbox.glob("out/*.py") == []  # symlink leading out: not reported
    for bad in ("../*", "/etc/*"):
        with pytest.raises(SandboxError):
            await host_sandbox.glob(bad)


async def test_grep(host_sandbox: Sandbox) -> None:
    await host_sandbox.write_file("src/a.py", "import os\nprint('hello')\n")
    await host_sandbox.write_file("src/b.txt", "hello world\nbye\n")
    await host_sandbox.write_file("/mnt/user-data/outputs/o.md", "hello out\n")
    (host_sandbox.thread_paths.workspace / "bin.dat").write_bytes(b"hello\x00")
    assert await host_sandbox.grep("hel+o") == [
        f"{WS}/src/a.py:2: print('hello')",
        f"{WS}/src/b.txt:1: hello world",
    ]
    assert await host_sandbox.grep("hello", glob="*.py") == [f"{WS}/src/a.py:2: print('hello')"]
    assert await host_sandbox.grep("hello", path="/mnt/user-data/outputs/o.md") == [
        "/mnt/user-data/outputs/o.md:1: hello out"
    ]
    assert len(await host_sandbox.grep("hello", path="/mnt/user-data", max_matches=2)) == 2
    assert await host_sandbox.grep("^nothing$") == []
    with pytest.raises(SandboxError, match="Invalid regular expression"):
        await host_sandbox.grep("(unclosed")


async def test_commands_and_file_tools_share_the_folders(host_sandbox: Sandbox) -> None:
    """What a command writes the file tools read, and the reverse; a link a command plants
    towards a file outside is refused by the file tools."""
    await host_sandbox.write_file("from-tool.txt", "tool\n")
    r = await host_sandbox.execute(
        "cat from-tool.txt && echo cmd > /mnt/user-data/outputs/from-cmd.txt "
        "&& ln -s /etc/passwd leak && ln -s / root-link"
    )
    assert (r.exit_code, r.stdout) == (0, "tool\n"), r.stderr
    assert await host_sandbox.read_file("/mnt/user-data/outputs/from-cmd.txt") == "cmd\n"
    await host_sandbox.str_replace("/mnt/user-data/outputs/from-cmd.txt", "cmd", "edited")
    r = await host_sandbox.execute("cat /mnt/user-data/outputs/from-cmd.txt")
    assert r.stdout == "edited\n"
    for path in ("leak", "root-link/etc/passwd"):
        with pytest.raises(PathDeniedError):
            await host_sandbox.read_file(path)
        with pytest.raises(PathDeniedError):
            await host_sandbox.write_file(path, "pwned")
