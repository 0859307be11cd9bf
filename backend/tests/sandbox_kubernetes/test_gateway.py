"""A lead-agent run on a gateway with ``sandbox.kind: kubernetes``: its file and bash tools
run in the thread's pod (created through the fake API), and the outputs written there are
served by the gateway from the shared data volume."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.kube_api import FakeKubeApi
from pronghorn.sandbox.kubernetes import spec
from support.inproc import InProcessServer
from support.live import base_config

from .conftest import CLAIM, free_port

OUT = "/mnt/user-data/outputs"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


RULES = [
    {
        "match": "write and count",
        "steps": [
            _call("write_file", description="w", path=f"{OUT}/notes.md", content="a\nb\n"),
            _call(
                "bash",
                description="where",
                command=f"wc -l {OUT}/notes.md; tr '\\0' ' ' < /proc/$PPID/cmdline",
            ),
            _call("present_files", filepaths=[f"{OUT}/notes.md"]),
            {"text": "Done in the pod."},
        ],
    }
]


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[tuple[InProcessServer, FakeKubeApi]]:
    workdir = tmp_path / "gw"
    (workdir / "data").mkdir(parents=True)
    with FakeKubeApi(claims={CLAIM: workdir / "data"}) as kube:
        cfg = base_config(
            models=[{"name": "s", "provider": "scripted", "rules": RULES}],
            agent={"default_model": "s"},
            sandbox={
                "kind": "kubernetes",
                "kubernetes": {
                    "api_url": kube.base_url,
                    "agent_port": free_port(),
                    "data_volume_claim": CLAIM,
                    "agent_token_key": uuid.uuid4().hex,
                },
            },
        )
        server = InProcessServer(workdir, cfg).start(timeout=120)
        try:
            yield server, kube
        finally:
            server.stop()


async def test_a_run_uses_the_threads_pod_and_its_outputs_are_served(
    gateway: tuple[InProcessServer, FakeKubeApi],
) -> None:
    srv, kube = gateway
    assert len(kube.network_policies()) == 1  # made at startup
    client = srv.sdk()
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        tid, "lead_agent", input={"messages": [{"role": "human", "content": "write and count"}]}
    )
    assert isinstance(out, dict)
    tools = {m["name"]: m for m in out["messages"] if m["type"] == "tool"}
    assert all(m.get("status") != "error" for m in tools.values()), tools
    (pod,) = kube.pods().values()
    assert pod["metadata"]["labels"][spec.EGRESS_LABEL] == "deny"
    assert pod["metadata"]["annotations"][spec.KEY_ANNOTATION].endswith(f"/{tid}")
    count, parent = tools["bash"]["content"].splitlines()[:2]
    assert count == "2 /mnt/user-data/outputs/notes.md"
    assert parent.endswith("-m pronghorn.sandbox.agent ")  # run by the pod's agent
    assert out["messages"][-1]["content"] == "Done in the pod."
    async with srv.ahttp() as http:
        r = await http.get(f"{srv.url}/api/threads/{tid}/artifacts/outputs/notes.md")
    assert r.status_code == 200 and r.text == "a\nb\n"
