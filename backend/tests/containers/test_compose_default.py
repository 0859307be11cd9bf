"""The default compose stack for real (`gateway` on SQLite, plus the `nginx` profile in front
of it), from the offline-built image, the shipped compose file, config.example.yaml and
.env.example as an operator copies them: healthchecks go green, the official LangGraph SDK
streams an agent run through nginx, the gateway runs as uid 10001 with no capabilities under
the shipped seccomp profile and its bubblewrap sandbox isolates the agent's commands, and
`pronghorn doctor` in the container passes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from containers.compose import DOCKER_DIR, Stack
from containers.conftest import TIMEOUT, create_api_key

PROMPT = "Write a report about pronghorns and save it as container-report.md"
ARTIFACT = "container-report.md"

pytestmark = TIMEOUT


@dataclass
class Deployed:
    stack: Stack
    gateway: str  # container id
    nginx: str
    key: str

    @property
    def nginx_url(self) -> str:
        return f"http://127.0.0.1:{self.stack.variables['PRONGHORN_HTTP_PORT']}"

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.stack.variables['PRONGHORN_PUBLISH_PORT']}"


@pytest.fixture(scope="module")
def deployed(make_stack) -> Iterator[Deployed]:
    stack = make_stack(["nginx"])
    stack.up()
    (gateway,) = stack.wait_healthy("gateway")
    (nginx,) = stack.wait_healthy("nginx")
    yield Deployed(stack, gateway, nginx, create_api_key(stack, gateway))


def test_healthchecks_go_green_and_both_ports_answer_on_loopback(deployed: Deployed):
    assert deployed.stack.health(deployed.gateway) == "healthy"
    assert deployed.stack.health(deployed.nginx) == "healthy"
    for url in (deployed.gateway_url, deployed.nginx_url):
        assert httpx.get(f"{url}/health", timeout=10).status_code == 200
    # Published on 127.0.0.1 only (the compose default for the gateway, set for nginx here).
    ports = deployed.stack.inspect(deployed.gateway)["NetworkSettings"]["Ports"]["2026/tcp"]
    assert {p["HostIp"] for p in ports} == {"127.0.0.1"}


def test_the_sdk_streams_an_agent_run_through_nginx(deployed: Deployed):
    url = f"{deployed.nginx_url}/api/langgraph"
    with get_sync_client(url=url, api_key=deployed.key) as client:
        _stream_and_check(client, deployed)


def _stream_and_check(client: SyncLangGraphClient, deployed: Deployed) -> None:
    thread = client.threads.create()
    tid = thread["thread_id"]
    arrivals: list[float] = []
    tokens: list[str] = []
    values: list[dict[str, Any]] = []
    events: list[str] = []
    for part in client.runs.stream(
        tid,
        "lead_agent",
        input={"messages": [{"role": "user", "content": PROMPT}]},
        stream_mode=["messages-tuple", "values"],
    ):
        events.append(part.event)
        if part.event == "messages" and isinstance(part.data, list) and part.data:
            chunk = part.data[0]
            streamed = chunk.get("type") in ("AIMessageChunk", "ai")
            if streamed and isinstance(chunk.get("content"), str):
                arrivals.append(time.monotonic())
                tokens.append(chunk["content"])
        elif part.event == "values":
            values.append(part.data)
    assert events[0] == "metadata"
    # SSE through nginx unbuffered: the answer arrives token by token over time, not at once.
    assert len(tokens) > 10
    assert arrivals[-1] - arrivals[0] > 0.2, "the stream arrived in one burst (buffered?)"
    messages = values[-1]["messages"]
    results = {m["tool_call_id"]: m for m in messages if m["type"] == "tool"}
    calls = [tc for m in messages if m["type"] == "ai" for tc in m.get("tool_calls") or []]
    assert [tc["name"] for tc in calls] == ["write_file", "bash", "present_files"]
    assert all(results[tc["id"]].get("status") != "error" for tc in calls), results
    # The file the agent wrote is on the data volume and downloads through nginx.
    resp = httpx.get(
        f"{deployed.nginx_url}/api/threads/{tid}/artifacts/outputs/{ARTIFACT}",
        headers={"x-api-key": deployed.key},
        timeout=30,
    )
    assert resp.status_code == 200 and b"ronghorn" in resp.content
    # The agent's bash call ran in bubblewrap with the seccomp filter, not the fallback.
    logs = deployed.stack.logs("gateway")
    assert re.search(r"sandbox isolation=bwrap \(.*seccomp=True", logs), logs[-3000:]
    assert "SANDBOX ISOLATION DISABLED" not in logs


def _status(deployed: Deployed, pid: str = "1") -> dict[str, str]:
    done = deployed.stack.exec(deployed.gateway, "cat", f"/proc/{pid}/status")
    assert done.returncode == 0, done.stderr
    return dict(line.split(":\t", 1) for line in done.stdout.splitlines() if ":\t" in line)


def test_the_gateway_runs_non_root_without_capabilities_under_the_shipped_seccomp_profile(
    deployed: Deployed,
):
    info = deployed.stack.inspect(deployed.gateway)
    # Started as root with four capabilities, only for the entrypoint's /proc mount...
    assert info["Config"]["User"] == "0:0"
    assert info["HostConfig"]["CapDrop"] == ["ALL"]
    assert sorted(info["HostConfig"]["CapAdd"]) == ["SETGID", "SETPCAP", "SETUID", "SYS_ADMIN"]
    opts = info["HostConfig"]["SecurityOpt"]
    assert "no-new-privileges:true" in opts or "no-new-privileges" in opts
    seccomp = [o for o in opts if o.startswith("seccomp=")]
    shipped = json.loads((DOCKER_DIR / "seccomp-bwrap.json").read_text())
    assert len(seccomp) == 1 and json.loads(seccomp[0].removeprefix("seccomp=")) == shipped
    # ...then the server (pid 1: the entrypoint execs it) has dropped all of it.
    status = _status(deployed)
    cmdline = deployed.stack.exec(deployed.gateway, "cat", "/proc/1/cmdline").stdout
    assert "pronghorn" in cmdline and "serve" in cmdline, cmdline
    assert status["Uid"].split() == ["10001"] * 4
    assert status["Gid"].split() == ["10001"] * 4
    assert status["Groups"].strip() == ""
    for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert status[caps].strip() == "0000000000000000", (caps, status[caps])
    assert status["NoNewPrivs"].strip() == "1"
    assert status["Seccomp"].strip() == "2"  # a filter is on


def test_bubblewrap_isolates_a_command_inside_the_container(deployed: Deployed):
    # What the sandbox needs from the container: new user, pid, network and mount namespaces
    # and a fresh /proc, as uid 10001 with no capabilities. (No --die-with-parent here: under
    # `docker exec` the parent is a thread of the container runtime, whose exit kills bwrap.)
    script = "echo pid=$$; grep -c : /proc/net/dev; id -u"
    done = deployed.stack.docker(
        "exec",
        "-u",
        "10001:10001",
        deployed.gateway,
        "bwrap",
        "--unshare-all",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "sh",
        "-c",
        script,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pid_line, interfaces, uid = done.stdout.split()
    assert int(pid_line.removeprefix("pid=")) <= 3  # its own pid namespace
    assert interfaces == "1"  # only lo: no network
    assert uid == "10001"


def test_doctor_is_green_in_the_container(deployed: Deployed):
    done = deployed.stack.exec(deployed.gateway, "pronghorn", "doctor", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    failed = [c for c in report["checks"] if not c.get("ok")]
    assert not failed, failed
    names = {c["name"] for c in report["checks"]}
    assert {"sandbox", "database", "web UI"} <= names, names
