"""What goes wrong: pods that never start, crash, are left by a restarted gateway, or an API
that refuses; each ends in a clear error or a working sandbox again, never a stray pod."""

from __future__ import annotations

import uuid

import pytest

from fakes.kube_api import FakeKubeApi
from pronghorn.sandbox.errors import SandboxError

from .conftest import MakeProvider


def _creates(kube: FakeKubeApi) -> int:
    return sum(1 for c in kube.calls if c.verb == "create" and c.resource == "pods")


async def test_a_missing_image_is_a_clear_error_and_leaves_no_pod(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    provider = make_provider(image="registry.example/nope:1")
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    with pytest.raises(SandboxError, match=r"failed to start: container sandbox: ImagePullBackOff"):
        await sandbox.execute("true")
    assert kube.pods() == {}


async def test_a_pod_that_cannot_be_scheduled_times_out_with_the_reason(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    kube.schedulable = False
    provider = make_provider(start_timeout_s=1.5)
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    with pytest.raises(SandboxError, match=r"within 1.5s .*Unschedulable: 0/3 nodes"):
        await sandbox.execute("true")
    assert kube.pods() == {}


async def test_a_crashed_pod_is_replaced_and_the_files_survive(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    provider = make_provider()
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    await sandbox.write_file("state.txt", "kept")
    (name,) = kube.pods()
    first_uid = kube.pods()[name]["metadata"]["uid"]
    kube.crash(name)
    result = await sandbox.execute("cat state.txt")
    assert result.stdout == "kept"
    assert kube.pods()[name]["metadata"]["uid"] != first_uid
    assert kube.pods()[name]["status"]["phase"] == "Running"


async def test_a_restarted_gateway_adopts_its_running_pods(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    first = make_provider()
    await first.start()
    await (await first.acquire("alice", thread_id)).execute("echo hi > mark.txt")
    await first.close()  # with agent_token_key the pods stay for the next process
    (name,) = kube.pods()
    uid = kube.pods()[name]["metadata"]["uid"]
    creates = _creates(kube)
    second = make_provider()
    await second.start()
    assert list(second.pool.live) == [name]
    result = await (await second.acquire("alice", thread_id)).execute("cat mark.txt")
    assert result.stdout == "hi\n"
    assert _creates(kube) == creates
    assert kube.pods()[name]["metadata"]["uid"] == uid


async def test_without_a_token_key_orphans_are_removed_and_close_deletes_its_pods(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    crashed = make_provider(agent_token_key=None)  # a process that dies without closing
    await crashed.start()
    await (await crashed.acquire("alice", thread_id)).execute("true")
    assert len(kube.pods()) == 1
    restarted = make_provider(agent_token_key=None)
    await restarted.start()
    assert kube.pods() == {}
    await (await restarted.acquire("bob", str(uuid.uuid4()))).execute("true")
    assert len(kube.pods()) == 1
    await restarted.close()
    assert kube.pods() == {}


async def test_pods_of_another_instance_are_never_touched(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    other = make_provider(instance="staging", agent_token_key=None)
    await other.start()
    await (await other.acquire("alice", thread_id)).execute("true")
    mine = make_provider(agent_token_key=None)
    await mine.start()
    assert len(kube.pods()) == 1


async def test_a_rotated_token_key_replaces_the_pod(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    first = make_provider(agent_token_key="the-first-key-0123456789")
    await first.start()
    await (await first.acquire("alice", thread_id)).execute("true")
    await first.close()
    (name,) = kube.pods()
    uid = kube.pods()[name]["metadata"]["uid"]
    second = make_provider(agent_token_key="the-second-key-0123456789")
    await second.start()
    result = await (await second.acquire("alice", thread_id)).execute("echo ok")
    assert result.stdout == "ok\n"
    assert kube.pods()[name]["metadata"]["uid"] != uid


async def test_a_missing_namespace_is_named_in_the_error(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    provider = make_provider(namespace="nowhere")
    with pytest.raises(
        SandboxError,
        match='NetworkPolicy in namespace nowhere: 404 NotFound: namespaces "nowhere" not found',
    ):
        await provider.start()


async def test_a_refused_create_is_a_clear_error(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    provider = make_provider()
    await provider.start()
    kube.fail_next[("create", "pods")] = (403, "Forbidden")
    sandbox = await provider.acquire("alice", thread_id)
    with pytest.raises(SandboxError, match=r"could not be created: 403 Forbidden"):
        await sandbox.execute("true")
    # The next call tries again and works.
    assert (await sandbox.execute("echo back")).stdout == "back\n"


async def test_a_wrong_api_token_is_reported(
    kube: FakeKubeApi, make_provider: MakeProvider
) -> None:
    provider = make_provider(api_token="wrong")
    with pytest.raises(SandboxError, match="401 Unauthorized"):
        await provider.start()


async def test_a_pod_per_user_serves_each_thread_in_its_own_folders(
    kube: FakeKubeApi, make_provider: MakeProvider
) -> None:
    provider = make_provider(scope="user")
    await provider.start()
    one = await provider.acquire("alice", str(uuid.uuid4()))
    two = await provider.acquire("alice", str(uuid.uuid4()))
    await one.write_file("who.txt", "one")
    await two.execute("echo two > who.txt")
    assert (await one.execute("cat who.txt; pwd")).stdout == "one/mnt/user-data/workspace\n"
    assert await two.read_file("who.txt") == "two\n"
    (pod,) = kube.pods().values()
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["subPath"] == "users/alice"
    await (await provider.acquire("bob", str(uuid.uuid4()))).execute("true")
    assert len(kube.pods()) == 2


async def test_a_pod_dying_mid_command_is_reported_and_replaced_after(
    kube: FakeKubeApi, make_provider: MakeProvider, thread_id: str
) -> None:
    import asyncio
    import os

    provider = make_provider()
    await provider.start()
    sandbox = await provider.acquire("alice", thread_id)
    fifo = sandbox.thread_paths.workspace / "gate"
    await sandbox.execute("true")
    os.mkfifo(fifo)
    running = asyncio.create_task(sandbox.execute("cat gate"))
    writer = await asyncio.to_thread(open, fifo, "w")  # the command is running
    (name,) = kube.pods()
    await asyncio.to_thread(kube.crash, name)
    with pytest.raises(SandboxError, match=r"stopped during the call \(container sandbox exited"):
        await running
    writer.close()
    assert name not in provider.pool.live
    assert (await sandbox.execute("echo again")).stdout == "again\n"
