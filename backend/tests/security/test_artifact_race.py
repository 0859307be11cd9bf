"""Attack: bash in the sandbox flips ``outputs/real`` between a folder and a symlink to a
host folder while a client hammers ``GET /artifacts/outputs/real/shadow``.

Before the fix the route checked the resolved path and then opened it again by name, so
some answers were the host file. Now the file is opened once, walking from the thread root
without following links out of it, and that descriptor is served: zero leaks, and
``/health`` stays responsive throughout.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from security.conftest import assert_responsive
from security.live_agent import (
    call,
    new_thread,
    start_agent_server,
    start_run,
    thread_dir,
    wait_run,
)
from support.live import LiveServer

SECRET = "HOST-SECRET-7f3a9c"
SWAP_SECONDS = 90
"""At most: the loop stops once the hammer has made ``MIN_REQUESTS`` (the test then writes
``STOP_FILE``), seconds on an idle machine; the bound only guards a run that never ends."""
MIN_REQUESTS = 2000
STOP_FILE = "stop-swapping"
ETC_SHADOW = Path("/etc/shadow")


def _swap_loop(name: str, target: str) -> str:
    """Shell that flips outputs/<name> between a real folder and a link to ``target``
    until outputs/``STOP_FILE`` exists: a Python rename loop, no process per flip, so the
    name changes far more often than with ``mv`` and leaves the CPU to the requests."""
    flips = "; ".join(
        f"os.rename('{a}', '{b}')"
        for a, b in (
            (f"d-{name}", name),
            (name, f"d-{name}"),
            (f"l-{name}", name),
            (name, f"l-{name}"),
        )
    )
    return (
        f"mkdir -p d-{name} && printf thread-file > d-{name}/shadow && "
        f"ln -sfn {target} l-{name} && "
        f'timeout {SWAP_SECONDS} python3 -c "import os\n'
        f"while not os.path.exists('{STOP_FILE}'): {flips}\""
    )


def _etc_shadow() -> bytes | None:
    try:
        data = ETC_SHADOW.read_bytes()
    except OSError:
        return None
    return data if len(data) > 20 else None


@pytest.fixture(scope="module")
def host_secret(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the gateway can read but no thread may: tmp, outside the data dir."""
    folder = tmp_path_factory.mktemp("host-secret")
    (folder / "shadow").write_text(f"{SECRET}\n")
    return folder


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, host_secret: Path) -> Iterator[LiveServer]:
    loops = [_swap_loop("real", str(host_secret))]
    if _etc_shadow() is not None:
        loops.append(_swap_loop("etc", "/etc"))
    # every loop in outputs/ (a bare `cd && (a) & (b)` would run b where the shell started)
    command = "cd ../outputs && { " + "".join(f"( {loop} ) & " for loop in loops) + "wait; }"
    rules = [
        {
            "match": "swap",
            "steps": [
                call("bash", description="swap", command=command),
                {"text": "swapped"},
            ],
        }
    ]
    server = start_agent_server(
        tmp_path_factory.mktemp("artifact-race"),
        rules,
        sandbox={"command_timeout_s": SWAP_SECONDS + 30},
    )
    yield server
    server.stop()


def _hammer(
    base_url: str,
    paths: list[str],
    stop: threading.Event,
    enough: threading.Event,
    counts: Counter[str],
    leaks: list[str],
) -> None:
    shadow = _etc_shadow()
    with httpx.Client(base_url=base_url, timeout=30) as http:
        i = 0
        while not stop.is_set():
            path = paths[i % len(paths)]
            i += 1
            r = http.get(path)
            body = r.content
            if SECRET.encode() in body or (shadow is not None and shadow[:20] in body):
                leaks.append(f"{path}: {r.status_code} {body[:40]!r}")
            elif r.status_code == 200:
                csp = r.headers.get("content-security-policy", "")
                if body != b"thread-file" or not csp.endswith("sandbox"):
                    counts["unexpected 200"] += 1
            counts[str(r.status_code)] += 1
            if sum(counts.values()) >= MIN_REQUESTS:
                enough.set()


@pytest.mark.timeout(600)
def test_swap_loop_never_leaks_a_host_file(srv: LiveServer, host_secret: Path) -> None:
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        tid = new_thread(http)
        outputs = thread_dir(srv, tid) / "outputs"
        run_id = start_run(http, tid, "swap please")
        # The link is made before the loop starts, which then renames it away and back: what
        # was seen is kept (looking again could catch it renamed, as CI once did).
        deadline = time.monotonic() + 120
        while not (seen := os.path.lexists(outputs / "l-real")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen, "the swap loop never started"
        names = ["real"] + (["etc"] if _etc_shadow() is not None else [])
        paths = [f"/api/threads/{tid}/artifacts/outputs/{n}/shadow" for n in names]
        counts: Counter[str] = Counter()
        leaks: list[str] = []
        stop, enough = threading.Event(), threading.Event()
        workers = [
            threading.Thread(target=_hammer, args=(srv.url, paths, stop, enough, counts, leaks))
            for _ in range(4)
        ]
        with assert_responsive(srv.url):
            for w in workers:
                w.start()
            # hammer while the loop runs, MIN_REQUESTS, then let the loop (and the run) end
            enough.wait(SWAP_SECONDS)
            (outputs / STOP_FILE).touch()
            stop.set()
            for w in workers:
                w.join(60)
        run = wait_run(http, tid, run_id, 120)
    total = sum(counts[k] for k in ("200", "403", "404"))
    print(f"artifact race: {dict(counts)}, leaks={len(leaks)}")
    assert run["status"] == "success", run
    assert not leaks, f"{len(leaks)} answers leaked a host file ({dict(counts)}): {leaks[:3]}"
    assert total >= MIN_REQUESTS, counts
    # the route kept working during the attack: the thread's own file was served, and
    # the link was refused (403) or the name was between renames (404)
    assert counts["200"] > 0 and counts["403"] > 0, counts
    assert set(counts) <= {"200", "403", "404"}, counts
