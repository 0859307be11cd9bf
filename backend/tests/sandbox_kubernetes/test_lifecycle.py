"""The Kubernetes provider against the fake API: pods are created, run commands and file
operations through their agent, are reaped, capped, adopted and cleaned up."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.kube_api import FakeKubeApi
from pronghorn.sandbox.errors import PathDeniedError, SandboxError
from pronghorn.sandbox.kubernetes import spec
from pronghorn.sandbox.kubernetes.sandbox import KubernetesSandbox

from .conftest import FakeClock, MakeProvider


async def test_a_thread_gets_a_labelled_pod_that_runs_its_commands(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str, data_dir: Path
) -> None:
    provider = make_provider()
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    result = await sandbox.execute("echo hello from $(pwd) && id -u")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == "hello from /mnt/user-data/workspace"
    pods = kube.pods()
    assert len(pods) == 1
    (pod,) = pods.values()
    labels = pod["metadata"]["labels"]
    assert labels[spec.INSTANCE_LABEL] == "pronghorn"
    assert labels[spec.EGRESS_LABEL] == "deny"
    assert pod["status"]["phase"] == "Running"
    container = pod["spec"]["containers"][0]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["spec"]["automountServiceAccountToken"] is False
    assert container["resources"]["limits"]["memory"] == str(2 * 1024**3)
    mount = container["volumeMounts"][0]
    assert mount["subPath"] == f"users/alice/threads/{thread_id}"
    # The file written in the pod is in the gateway's data dir (the shared volume).
    await sandbox.execute("echo data > /mnt/user-data/outputs/report.txt")
    root = data_dir / "users" / "alice" / "threads" / thread_id
    assert (root / "outputs" / "report.txt").read_text() == "data\n"
    # A second sandbox of the same thread uses the same pod.
    again = await provider.acquire("alice", thread_id)
    assert (await again.execute("cat ../outputs/report.txt")).stdout == "data\n"
    assert len(kube.pods()) == 1


async def test_the_network_policy_denies_egress_and_admits_only_the_gateway(
    kube: FakeKubeApi, make_provider: MakeProvider
) -> None:
    await make_provider().start()
    (policy,) = kube.network_policies().values()
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["egress"] == []
    assert policy["spec"]["podSelector"]["matchLabels"][spec.EGRESS_LABEL] == "deny"
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"][0]["podSelector"] == {"matchLabels": {spec.NAME_LABEL: spec.GATEWAY_NAME}}
    # A second start (another replica) finds it there: 409 is fine.
    await make_provider().start()
    assert len(kube.network_policies()) == 1


async def test_with_network_on_pods_get_the_policy_that_allows_egress(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    provider = make_provider(sandbox={"network": True})
    await provider.start()
    (policy,) = kube.network_policies().values()
    assert policy["spec"]["egress"] == [{}]
    await (await provider.acquire("alice", thread_id)).execute("true")
    (pod,) = kube.pods().values()
    assert pod["metadata"]["labels"][spec.EGRESS_LABEL] == "allow"


async def test_file_tools_work_in_the_pod_and_stay_contained(
    make_provider: MakeProvider, thread_id: str, data_dir: Path, tmp_path: Path
) -> None:
    provider = make_provider()
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    await sandbox.write_file("/mnt/user-data/workspace/notes/a.txt", "one\ntwo\nthree\n")
    assert await sandbox.read_file("notes/a.txt", 2, 3) == "two\nthree\n"
    assert await sandbox.str_replace("notes/a.txt", "two", "TWO") == 1
    assert "TWO" in await sandbox.read_file("/mnt/user-data/workspace/notes/a.txt")
    listing = await sandbox.list_dir("/mnt/user-data/workspace")
    assert "/mnt/user-data/workspace/notes/a.txt" in listing
    assert await sandbox.glob("**/*.txt") == ["/mnt/user-data/workspace/notes/a.txt"]
    hits = await sandbox.grep("TWO")
    assert hits == ["/mnt/user-data/workspace/notes/a.txt:2: TWO"]
    with pytest.raises(PathDeniedError):
        await sandbox.read_file("/etc/passwd")
    with pytest.raises(PathDeniedError):
        await sandbox.write_file("/mnt/user-data/../../escape.txt", "x")
    # A link a command made to outside the thread is refused by the file tools.
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    await sandbox.execute(f"ln -s {outside} /mnt/user-data/workspace/link.txt")
    with pytest.raises(SandboxError):
        await sandbox.read_file("link.txt")
    with pytest.raises(SandboxError, match="not found"):
        await sandbox.str_replace("notes/a.txt", "absent", "x")


async def test_a_command_past_its_timeout_is_killed_in_the_pod(
    make_provider: MakeProvider, thread_id: str, data_dir: Path
) -> None:
    provider = make_provider()
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    result = await sandbox.execute(
        "(sleep 30; echo late > /mnt/user-data/workspace/late.txt) & echo started; wait",
        timeout_s=1,
    )
    assert result.timed_out
    assert result.exit_code == -9
    assert "timed out after 1s" in result.stderr
    # The whole group died: the background child never writes.
    probe = await sandbox.execute("sleep 0.5; ls /mnt/user-data/workspace")
    assert "late.txt" not in probe.stdout


async def test_output_is_capped_and_the_environment_is_the_sandboxs(
    make_provider: MakeProvider, thread_id: str
) -> None:
    provider = make_provider(sandbox={"max_output_chars": 1000})
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    big = await sandbox.execute("head -c 50000 /dev/zero | tr '\\0' a")
    assert big.truncated
    assert len(big.stdout) < 1200
    env = await sandbox.execute("env")
    assert "PRONGHORN_SANDBOX_TOKEN" not in env.stdout
    assert "HOME=/mnt/user-data/workspace" in env.stdout


async def test_an_idle_pod_is_deleted_and_a_new_one_comes_on_next_use(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str, clock: FakeClock
) -> None:
    provider = make_provider(idle_timeout_s=60)
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    await sandbox.write_file("kept.txt", "on the volume")
    first = set(kube.pods())
    clock.now += 30
    assert await provider.pool.reap_idle() == []
    clock.now += 31
    assert await provider.pool.reap_idle() == list(first)
    assert kube.pods() == {}
    # Files are on the shared volume: the next pod sees them.
    assert await sandbox.read_file("kept.txt") == "on the volume"
    assert set(kube.pods()) == first  # same deterministic name, a new pod
    assert kube.pods()[next(iter(first))]["metadata"]["uid"]


async def test_the_cap_evicts_the_least_recently_used_idle_pod(
    kube: FakeKubeApi, make_provider: MakeProvider, clock: FakeClock
) -> None:
    import uuid

    provider = make_provider(max_pods=2)
    await provider.start()
    threads = [str(uuid.uuid4()) for _ in range(3)]
    boxes = [await provider.acquire("alice", t) for t in threads]
    await boxes[0].execute("true")
    clock.now += 1
    await boxes[1].execute("true")
    clock.now += 1
    await boxes[0].execute("true")  # thread 1 is now the least recently used
    names = [spec.pod_name(provider.settings, _key(b)) for b in boxes]
    clock.now += 1
    await boxes[2].execute("true")
    assert set(kube.pods()) == {names[0], names[2]}


async def test_the_cap_refuses_clearly_when_every_pod_is_busy(
    make_provider: MakeProvider, data_dir: Path
) -> None:
    import asyncio
    import os
    import uuid

    provider = make_provider(max_pods=1)
    await provider.start()
    busy = await provider.acquire("alice", str(uuid.uuid4()))
    other = await provider.acquire("alice", str(uuid.uuid4()))
    fifo = busy.thread_paths.workspace / "gate"
    os.mkfifo(fifo)
    running = asyncio.create_task(busy.execute("cat gate"))
    # Opening the pipe for writing returns once the command in the pod reads it.
    writer = await asyncio.to_thread(open, fifo, "w")
    with pytest.raises(SandboxError, match=r"All 1 sandbox pods .* busy"):
        await other.execute("true")
    writer.write("done\n")
    writer.close()
    assert (await running).stdout == "done\n"


def _key(sandbox: object) -> spec.SandboxKey:
    assert isinstance(sandbox, KubernetesSandbox)
    return sandbox.key
