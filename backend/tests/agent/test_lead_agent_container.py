"""The real ``lead_agent`` with ``sandbox.kind: container``: its bash and file tools act in a
labelled container without network (checked through the Docker Engine API), and a gateway
that stops removes its containers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import aiodocker
import pytest

from pronghorn.sandbox import container_spec as cs
from support.docker_engine import Engine, engine_or_reason
from support.inproc import InProcessServer
from support.live import base_config
from support.sdk import as_state

WS = "/mnt/user-data/workspace"
OUT = "/mnt/user-data/outputs"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {
        "match": "inside",
        "steps": [
            _call("write_file", description="write", path=f"{WS}/in.txt", content="from tool\n"),
            _call(
                "bash",
                description="where am I",
                command=(
                    f"cat {WS}/in.txt; hostname; id -u; "
                    "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,; echo; "
                    f"python3 -c 'print(6 * 7)' > {OUT}/answer.txt"
                ),
            ),
            _call("read_file", description="read", path=f"{OUT}/answer.txt"),
            {"text": "Done inside the container."},
        ],
    },
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    found, reason = engine_or_reason()
    if found is None:
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def instance() -> str:
    return f"agent-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def srv(
    tmp_path_factory: pytest.TempPathFactory, engine: Engine, instance: str
) -> Iterator[InProcessServer]:
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        sandbox={
            "kind": "container",
            "container": {
                "image": engine.sandbox_image,
                "docker_url": engine.url,
                "instance": instance,
            },
        },
    )
    server = InProcessServer(tmp_path_factory.mktemp("agent-container"), cfg).start(timeout=120)
    yield server
    server.stop()


async def _containers(engine: Engine, instance: str) -> list[dict[str, Any]]:
    docker = aiodocker.Docker(url=engine.url)
    try:
        found = await docker.containers.list(
            all=True, filters={"label": [f"{cs.LABEL_INSTANCE}={instance}"]}
        )
        return [dict(await c.show()) for c in found]
    finally:
        await docker.close()


async def test_tools_run_in_a_labelled_container_without_network(
    srv: InProcessServer, engine: Engine, instance: str
) -> None:
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    final = await client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "human", "content": "run inside"}]}
    )
    msgs = as_state(final)["messages"]
    assert msgs[-1]["content"] == "Done inside the container."
    tools = {m["name"]: m for m in msgs if m["type"] == "tool"}
    assert all(m.get("status") != "error" for m in tools.values()), tools
    lines = tools["bash"]["content"].splitlines()
    assert lines[0] == "from tool"  # the file tool's write, seen inside
    assert lines[1] == "sandbox"  # the container's hostname, not the gateway's
    assert lines[2] != "0"  # not root
    assert lines[3] == "lo,"  # loopback only: no network
    assert tools["read_file"]["content"].split()[-1] == "42"  # written inside, read by a tool

    (info,) = await _containers(engine, instance)
    labels = info["Config"]["Labels"]
    assert labels[cs.LABEL_SANDBOX] == "1"
    assert labels[cs.LABEL_THREAD] == tid
    assert info["HostConfig"]["NetworkMode"] == "none"
    assert info["State"]["Running"] is True

    async with srv.ahttp() as http:
        r = await http.get(f"{srv.url}/api/threads/{tid}/artifacts/outputs/answer.txt")
    assert r.status_code == 200 and r.text == "42\n"


async def test_a_stopped_gateway_leaves_no_container(
    srv: InProcessServer, engine: Engine, instance: str
) -> None:
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "human", "content": "inside again"}]}
    )
    assert await _containers(engine, instance)
    srv.stop()
    assert await _containers(engine, instance) == []
