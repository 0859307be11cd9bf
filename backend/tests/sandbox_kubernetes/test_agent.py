"""The sandbox agent on its own (``python -m pronghorn.sandbox.agent`` as a process): it
refuses calls without its token, bounds request bodies, and kills a command whose caller
went away."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from pronghorn.sandbox.agent import protocol as p

from .conftest import free_port

TOKEN = "t" * 32


@dataclass
class Agent:
    url: str
    root: Path

    def headers(self, token: str = TOKEN) -> dict[str, str]:
        return {"authorization": f"Bearer {token}"}


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    port = free_port()
    root = tmp_path / "thread"
    env = {
        "PATH": os.environ["PATH"],
        p.ENV_TOKEN: TOKEN,
        p.ENV_ROOT: str(root),
        p.ENV_HOST: "127.0.0.1",
        p.ENV_PORT: str(port),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pronghorn.sandbox.agent",
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(trust_env=False) as http:
            async with asyncio.timeout(60):
                while True:  # the agent's readiness, as the kubelet probes it
                    with contextlib.suppress(httpx.TransportError):
                        if (await http.get(url + p.HEALTH_PATH)).status_code == 200:
                            break
                    await asyncio.sleep(0.05)
        yield Agent(url, root)
    finally:
        proc.kill()
        await proc.wait()


async def test_calls_without_the_token_are_refused(agent: Agent) -> None:
    body = {"command": "echo hi", "timeout_s": 5, "max_output_chars": 1000}
    async with httpx.AsyncClient(trust_env=False) as http:
        url = f"{agent.url}{p.API_PREFIX}/exec"
        assert (await http.post(url, json=body)).status_code == 401
        wrong = await http.post(url, json=body, headers=agent.headers("x" * 32))
        assert wrong.status_code == 401
        assert wrong.json()["error"] == "unauthorized"
        ok = await http.post(url, json=body, headers=agent.headers())
        assert ok.status_code == 200 and ok.json()["stdout"] == "hi\n"
        bad = await http.post(url, json={"command": "x"}, headers=agent.headers())
        assert bad.status_code == 400 and bad.json()["error"] == "bad_request"
    # A body announced larger than the bound is refused before it is read.
    host, port = agent.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        (
            f"POST {p.API_PREFIX}/files/write HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {p.MAX_BODY_BYTES + 1}\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    assert status_line.startswith(b"HTTP/1.1 413")


async def test_a_command_dies_when_its_caller_goes_away(agent: Agent) -> None:
    agent.root.mkdir(parents=True, exist_ok=True)
    fifo = agent.root / "pid"
    os.mkfifo(fifo)
    body = {
        "command": "echo $$ > ../pid; exec sleep 60",
        "timeout_s": 120,
        "max_output_chars": 1000,
    }
    async with httpx.AsyncClient(trust_env=False) as http:
        call = asyncio.create_task(
            http.post(f"{agent.url}{p.API_PREFIX}/exec", json=body, headers=agent.headers())
        )
        # Reading the pipe returns once the command wrote its pid into it.
        pid = int(await asyncio.wait_for(asyncio.to_thread(fifo.read_text), 30))
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
    # Wait for the command's exit as an event: a pidfd turns readable when it ends. On a fast
    # machine the agent has killed and reaped it before this line: that is the exit too.
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        exited = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_reader(fd, exited.set)
        try:
            await asyncio.wait_for(exited.wait(), 10)
        finally:
            loop.remove_reader(fd)
    finally:
        os.close(fd)
