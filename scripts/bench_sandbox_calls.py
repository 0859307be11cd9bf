"""Cost of one bash call per sandbox provider, and the first call of a thread on the
Kubernetes provider (pod start), against the local fake Kubernetes API (its pods run the
sandbox agent as local processes on loopback). Run from backend/:

    uv run python ../scripts/bench_sandbox_calls.py
"""

import asyncio
import socket
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend" / "tests"))
from fakes.kube_api import FakeKubeApi
from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox.kubernetes.provider import KubernetesSandboxProvider
from pronghorn.sandbox.local import LocalSandboxProvider


def port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


async def timed(box, n=30):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        r = await box.execute("true")
        out.append(time.perf_counter() - t)
        assert r.exit_code == 0, r.stderr
    return statistics.median(out) * 1000, sorted(out)[int(n * 0.9)] * 1000


async def main():
    data = Path(tempfile.mkdtemp()) / "data"
    data.mkdir()
    with FakeKubeApi(claims={"c": data}) as kube:
        cfg = AppConfig.model_validate(
            {
                "data_dir": str(data),
                "sandbox": {
                    "kind": "kubernetes",
                    "kubernetes": {
                        "api_url": kube.base_url,
                        "agent_port": port(),
                        "data_volume_claim": "c",
                        "agent_token_key": "k" * 32,
                    },
                },
            }
        )
        prov = KubernetesSandboxProvider(cfg)
        await prov.start()
        box = await prov.acquire("alice", str(uuid.uuid4()))
        t = time.perf_counter()
        await box.execute("true")
        cold = (time.perf_counter() - t) * 1000
        med, p90 = await timed(box)
        print(
            "kubernetes (fake API, agent on loopback): first call (pod start) "
            f"{cold:.0f} ms; bash call median {med:.1f} ms p90 {p90:.1f} ms"
        )
        await prov.close()
    for iso in ("bwrap", "none"):
        local = LocalSandboxProvider(
            AppConfig.model_validate({"data_dir": str(data), "sandbox": {"isolation": iso}})
        )
        await local.start()
        box = await local.acquire("alice", str(uuid.uuid4()))
        med, p90 = await timed(box)
        print(f"local {local.isolation_in_effect}: bash call median {med:.1f} ms p90 {p90:.1f} ms")


asyncio.run(main())
