"""Attack: one file tool call freezes or wedges the gateway.

- ``grep`` with a catastrophically backtracking pattern held the GIL (stdlib ``re``): the
  whole process, ``/health`` included, froze. Now the ``regex`` engine matches with a
  timeout and releases the GIL; a cancelled grep ends within that timeout.
- ``mkfifo f`` then ``read_file f`` blocked a worker thread forever (six of them blocked
  every thread's file tools and the uploads API). Now files are opened non-blocking and
  anything but a regular file is refused.
- ``read_file`` of a 300 MB one-line file held the whole line in memory. Now lines are read
  in bounded chunks.

Each attack runs through the real tools (in process) and through a live gateway driven by
a scripted model, with ``/health`` answering within a second throughout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import ToolMessage

from pronghorn.agent.tools import ToolDeps, build_tools
from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import LocalSandboxProvider
from pronghorn.sandbox import files as sandbox_files
from security.conftest import assert_responsive
from security.live_agent import (
    call,
    calls,
    new_thread,
    start_agent_server,
    start_run,
    thread_dir,
    tool_messages,
    wait_run,
)
from support.live import BACKEND_DIR, LiveServer
from tools.conftest import ToolKit

WS = "/mnt/user-data/workspace"
# Exponential for backtracking engines, the regex engine included: only a timeout helps.
EVIL = r"^(a|aa)+$"
EVIL_LINE = "a" * 5000 + "!"
BIG_BYTES = 300 * 1024 * 1024
FIFO_READS = 8


def make_kit(data_dir: Path) -> ToolKit:
    cfg = AppConfig.model_validate(
        {"data_dir": str(data_dir), "sandbox": {"isolation": "none", "command_timeout_s": 20}}
    )
    deps = ToolDeps(sandboxes=LocalSandboxProvider(cfg), config=cfg, data_dir=data_dir.resolve())
    kit = ToolKit(deps=deps, thread_id=str(uuid.uuid4()))
    kit.tools = {t.name: t for t in build_tools(deps)}
    return kit


@pytest.fixture
def kit(tmp_path: Path) -> ToolKit:
    return make_kit(tmp_path / "data")


class LoopLag:
    """Measures how late a 20 ms ticker wakes up: the event loop's worst stall."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            started = time.monotonic()
            await asyncio.sleep(0.02)
            self.worst = max(self.worst, time.monotonic() - started - 0.02)

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


# --- ReDoS ----------------------------------------------------------------------------------


async def test_redos_line_from_the_issue_does_not_freeze_the_loop(kit: ToolKit) -> None:
    """``^(a+)+$`` on a 27-character line froze the process for seconds with ``re``."""
    await kit.text("write_file", description="d", path="line.txt", content="a" * 26 + "!\n")
    async with LoopLag() as lag:
        started = time.monotonic()
        out = await kit.text("grep", pattern=r"^(a+)+$", path=f"{WS}/line.txt")
        took = time.monotonic() - started
    assert out.startswith("No matches")
    assert lag.worst < 1.0, f"event loop stalled {lag.worst:.2f}s"
    assert took < sandbox_files.GREP_TIMEOUT_S + 10, took


async def test_exponential_grep_times_out_and_loop_stays_live(kit: ToolKit) -> None:
    await kit.text("write_file", description="d", path="evil.txt", content=EVIL_LINE + "\n")
    await kit.text("write_file", description="d", path="ok.txt", content="aaaa\n")
    async with LoopLag() as lag:
        started = time.monotonic()
        err = await kit.error("grep", pattern=EVIL)
        took = time.monotonic() - started
    assert "grep was stopped: matching line 1 took too long" in err and "(a+)+" in err
    assert took < sandbox_files.GREP_TIMEOUT_S + 10, took
    assert lag.worst < 1.0, f"event loop stalled {lag.worst:.2f}s"
    # the same pattern on a short line still works
    assert (await kit.text("grep", pattern=EVIL, path=f"{WS}/ok.txt")).endswith("ok.txt:1: aaaa")


def _worker_in(thread_prefix: str, function: str) -> bool:
    """Whether a thread named ``thread_prefix...`` is currently inside ``function``."""
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if not names.get(ident, "").startswith(thread_prefix):
            continue
        f = frame
        while f is not None:
            if f.f_code.co_name == function:
                return True
            f = f.f_back
    return False


async def test_cancelled_grep_stops_within_its_timeout(kit: ToolKit) -> None:
    await kit.text("write_file", description="d", path="evil.txt", content=EVIL_LINE + "\n")
    loop = asyncio.get_running_loop()
    executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="one-worker")
    loop.set_default_executor(executor)
    try:
        task = asyncio.create_task(kit.call("grep", pattern=EVIL))
        deadline = time.monotonic() + 30
        while not (inside := _worker_in("one-worker", "_grep_fd")) and time.monotonic() < deadline:  # noqa: ASYNC110 - polls another thread's stack
            await asyncio.sleep(0.02)
        assert inside, "grep never started matching"  # what was seen (it may be done by now)
        task.cancel()
        cancelled_at = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the only worker is free again once the regex work has stopped
        await asyncio.wait_for(loop.run_in_executor(None, lambda: None), 60)
        freed = time.monotonic() - cancelled_at
    finally:
        executor.shutdown(wait=False)
    # the regex engine's timeout counts CPU time: on a loaded machine allow some slack
    assert freed < sandbox_files.GREP_TIMEOUT_S + 10, f"grep outlived its cancel by {freed:.1f}s"


# --- FIFO -----------------------------------------------------------------------------------


async def test_fifo_is_refused_by_every_file_tool(kit: ToolKit) -> None:
    await kit.text("bash", description="d", command="mkfifo f && printf 'needle\\n' > n.txt")
    assert (kit.paths.workspace / "f").is_fifo()

    async def read_fifo() -> str:
        return await kit.error("read_file", description="d", path="f")

    errors = await asyncio.wait_for(asyncio.gather(*(read_fifo() for _ in range(FIFO_READS))), 30)
    assert all("FIFO" in e for e in errors), errors
    assert "FIFO" in await kit.error("write_file", description="d", path="f", content="x")
    assert "FIFO" in await kit.error(
        "write_file", description="d", path="f", content="x", append=True
    )
    assert "FIFO" in await kit.error(
        "str_replace", description="d", path="f", old_str="a", new_str="b"
    )
    assert "FIFO" in await kit.error("grep", pattern="x", path=f"{WS}/f")
    # a folder search skips it; the other files are still searched
    assert await kit.text("grep", pattern="needle") == f"{WS}/n.txt:1: needle"
    assert await kit.text("read_file", description="d", path="n.txt") == "     1\tneedle"
    assert f"{WS}/f" in (await kit.text("ls", description="d", path=WS)).splitlines()


async def test_fifo_in_outputs_is_not_presented(kit: ToolKit) -> None:
    await kit.text("bash", description="d", command="mkfifo ../outputs/p")
    result = await kit.call("present_files", filepaths=["/mnt/user-data/outputs/p"])
    assert isinstance(result, ToolMessage) and result.status == "error"
    assert "not a regular file" in str(result.content)


# --- 300 MB one-line file -------------------------------------------------------------------

_MEMORY_PROBE = textwrap.dedent(
    """
    import asyncio, json, os, sys, uuid
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from security.test_file_tool_dos import make_kit

    def hwm_kb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    async def main():
        kit = make_kit(Path(sys.argv[1]))
        await kit.text("ls", description="d", path="/mnt/user-data")
        big = kit.paths.workspace / "big.txt"
        with open(big, "wb") as fh:  # 300 MB, one line: 64 KiB of 'a', then a sparse tail
            fh.write(b"a" * 65536)
            fh.truncate(int(sys.argv[3]))
        results = {}
        before = hwm_kb()
        first = await kit.text("read_file", description="d", path="big.txt", end_line=1)
        results["first_len"] = len(first)
        results["first_tail"] = first[-200:]
        results["line2"] = await kit.text(
            "read_file", description="d", path="big.txt", start_line=2
        )
        results["grep"] = await kit.text("grep", pattern="b")
        results["edit"] = str((await kit.call(
            "str_replace", description="d", path="big.txt", old_str="a", new_str="b"
        )).content)
        results["growth_kb"] = hwm_kb() - before
        print(json.dumps(results))

    asyncio.run(main())
    """
)


@pytest.mark.timeout(400)
def test_300mb_single_line_costs_little_memory(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _MEMORY_PROBE,
            str(tmp_path / "data"),
            str(BACKEND_DIR / "tests"),
            str(BIG_BYTES),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=BACKEND_DIR,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert results["growth_kb"] < 50 * 1024, results
    assert "truncated at 30000 characters" in results["first_tail"]
    assert 30_000 < results["first_len"] < 40_000
    assert "fewer than 2 lines" in results["line2"]
    assert results["grep"].startswith("No matches")  # too big to search: skipped
    assert "str_replace edits files up to" in results["edit"]


# --- through a live gateway -----------------------------------------------------------------

ATTACK = "run the attack"
NORMAL = "read a normal file"
MAKE_FILES = "mkfifo f && head -c 5000 /dev/zero | tr '\\0' a > evil.txt && echo '!' >> evil.txt"
RULES = [
    {
        "match": ATTACK,
        "steps": [
            call("bash", description="make the files", command=MAKE_FILES),
            calls(*[("read_file", {"description": "fifo", "path": "f"})] * FIFO_READS),
            call("grep", pattern=EVIL, path=f"{WS}/evil.txt"),
            call("read_file", description="big", path="big.txt", end_line=1),
            {"text": "attack over"},
        ],
    },
    {
        "match": NORMAL,
        "steps": [
            call("write_file", description="w", path="n.txt", content="fine\n"),
            call("read_file", description="r", path="n.txt"),
            {"text": "read it"},
        ],
    },
]


def _hwm_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_agent_server(tmp_path_factory.mktemp("file-dos"), RULES)
    yield server
    server.stop()


@pytest.mark.timeout(600)
def test_gateway_survives_fifo_redos_and_huge_line(srv: LiveServer) -> None:
    assert srv.proc is not None
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        tid = new_thread(http)
        workspace = thread_dir(srv, tid) / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        with open(workspace / "big.txt", "wb") as fh:  # 300 MB, one line, mostly sparse
            fh.write(b"a" * 65536)
            fh.truncate(BIG_BYTES)
        before = _hwm_kb(srv.proc.pid)
        with assert_responsive(srv.url):
            run = wait_run(http, tid, start_run(http, tid, ATTACK), 180)
            growth_mb = (_hwm_kb(srv.proc.pid) - before) / 1024
            # while the attack's files are still there: the uploads API and another
            # thread's file tools work
            r = http.post(f"/api/threads/{tid}/uploads", files=[("files", ("u.txt", b"up"))])
            assert r.status_code == 200, r.text
            listed = http.get(f"/api/threads/{tid}/uploads").json()["files"]
            assert [f["name"] for f in listed] == ["u.txt"]
            other = new_thread(http)
            normal = wait_run(http, other, start_run(http, other, NORMAL), 120)
        assert run["status"] == "success", run
        assert normal["status"] == "success", normal
        tools = tool_messages(http, tid)
        fifo = [m for m in tools if m["name"] == "read_file" and "FIFO" in m["content"]]
        assert len(fifo) == FIFO_READS, [m["content"][:80] for m in tools]
        (grep,) = [m for m in tools if m["name"] == "grep"]
        assert grep["status"] == "error" and "grep was stopped" in grep["content"]
        big = [m for m in tools if m["name"] == "read_file" and "truncated" in m["content"]]
        assert len(big) == 1
        assert tool_messages(http, other)[-1]["content"] == "     1\tfine"
        assert (thread_dir(srv, tid) / "workspace" / "f").is_fifo()
    assert growth_mb < 50, f"the gateway's peak memory grew {growth_mb:.0f} MB"
