"""The provider needs no more than the shipped Role: run its whole lifecycle against a fake
API that enforces exactly that Role (403 for anything else), and record what it called.
``pronghorn doctor`` finds a missing permission, a missing namespace, an unreachable API."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from fakes.kube_api import FakeKubeApi
from pronghorn.sandbox.kubernetes.check import REQUIRED_RULES, check_kubernetes

from .conftest import FakeClock, MakeConfig, MakeProvider
from .manifests import role_rules


async def test_the_whole_lifecycle_runs_on_the_shipped_role_and_uses_all_of_it(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str, clock: FakeClock
) -> None:
    kube.allow = role_rules()
    provider = make_provider(idle_timeout_s=10)
    await provider.start()  # networkpolicies create, pods list
    sandbox = await provider.acquire("alice", thread_id)
    await sandbox.execute("true")  # pods create, watch
    fifo = sandbox.thread_paths.workspace / "gate"
    os.mkfifo(fifo)
    running = asyncio.create_task(sandbox.execute("cat gate"))
    writer = await asyncio.to_thread(open, fifo, "w")
    (name,) = kube.pods()
    await asyncio.to_thread(kube.crash, name)  # the lost answer: pods get
    writer.close()
    with pytest.raises(Exception, match="stopped during the call"):
        await running
    await sandbox.execute("true")
    clock.now += 11
    assert await provider.pool.reap_idle() == [name]  # pods delete
    refused = [c for c in kube.calls if (c.group, c.resource, c.verb) not in kube.allow]
    assert refused == []
    used = {(c.group, c.resource, c.verb) for c in kube.calls}
    assert used == set(REQUIRED_RULES)


async def test_doctor_passes_with_the_shipped_role(
    kube: FakeKubeApi, make_config: MakeConfig
) -> None:
    kube.allow = role_rules()
    got = await check_kubernetes(make_config().sandbox)
    assert got.ok, got.detail
    assert "RBAC complete" in got.detail
    dry = [c for c in kube.calls if c.resource == "pods"]
    assert [(c.verb, c.dry_run) for c in dry] == [("create", True)]
    assert kube.pods() == {}


async def test_doctor_names_a_missing_permission(
    kube: FakeKubeApi, make_config: MakeConfig
) -> None:
    kube.allow = role_rules() - {("", "pods", "delete"), ("", "pods", "watch")}
    got = await check_kubernetes(make_config().sandbox)
    assert not got.ok
    assert got.detail == "the gateway may not watch pods, delete pods in namespace pronghorn"
    assert got.hint is not None and "sandbox-rbac.yaml" in got.hint


async def test_doctor_finds_a_missing_namespace(kube: FakeKubeApi, make_config: MakeConfig) -> None:
    got = await check_kubernetes(make_config(namespace="elsewhere").sandbox)
    assert not got.ok
    assert 'namespaces "elsewhere" not found' in got.detail


async def test_doctor_reports_an_unreachable_api(make_config: MakeConfig) -> None:
    from .conftest import free_port

    got = await check_kubernetes(make_config(api_url=f"http://127.0.0.1:{free_port()}").sandbox)
    assert not got.ok
    assert got.detail.startswith("the Kubernetes API cannot be reached")


async def test_pronghorn_doctor_checks_the_kubernetes_provider_instead_of_bwrap(
    kube: FakeKubeApi, make_config: MakeConfig, tmp_path: Path
) -> None:
    import yaml

    from pronghorn.doctor import run_checks

    kube.allow = role_rules()
    config = make_config()
    path = tmp_path / "config.yaml"
    sandbox = config.sandbox.model_dump(mode="json")
    sandbox["kubernetes"]["api_token"] = "api-token"
    sandbox["kubernetes"]["agent_token_key"] = "a-test-key-of-enough-length"
    path.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "data"), "sandbox": sandbox}))
    results = {r.name: r for r in await run_checks(str(path))}
    assert "sandbox" not in results and "sandbox limits" not in results
    assert results["sandbox (kubernetes)"].ok, results["sandbox (kubernetes)"].detail
