"""The container provider's own guarantees, checked on a real Docker engine through its API:
hardening (labels, no network, non-root, no capabilities, read-only root, limits, no engine
socket inside), warm reuse, the idle timeout, the cap, orphan adoption and removal, scopes,
and clear errors when the engine or the image is missing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiodocker
import pytest

from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox import SandboxError
from pronghorn.sandbox import container_spec as cs
from pronghorn.sandbox.container import ContainerSandbox, ContainerSandboxProvider
from pronghorn.sandbox.mounts import ReadOnlyMount
from support.docker_engine import engine_or_reason

from .conftest import container_config


@pytest.fixture
async def docker() -> AsyncIterator[aiodocker.Docker]:
    engine, reason = engine_or_reason()
    if engine is None:
        pytest.skip(reason)
    client = aiodocker.Docker(url=engine.url)
    yield client
    await client.close()


Make = Callable[[AppConfig], ContainerSandboxProvider]


@pytest.fixture
async def make() -> AsyncIterator[Make]:
    """Providers made by the test, closed at its end."""
    made: list[ContainerSandboxProvider] = []

    def factory(config: AppConfig) -> ContainerSandboxProvider:
        provider = ContainerSandboxProvider(config)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        await provider.close()


def _tid() -> str:
    return str(uuid.uuid4())


async def _containers(docker: aiodocker.Docker, instance: str) -> list[dict[str, object]]:
    found = await docker.containers.list(
        all=True, filters={"label": [f"{cs.LABEL_INSTANCE}={instance}"]}
    )
    return [await c.show() for c in found]


async def _ids(docker: aiodocker.Docker, provider: ContainerSandboxProvider) -> dict[str, str]:
    """key label -> id of each container of the provider's instance, from the engine."""
    infos = await _containers(docker, provider.config.container.instance)
    ids = {i["Config"]["Labels"][cs.LABEL_KEY]: str(i["Id"]) for i in infos}  # type: ignore[index]
    assert len(ids) == len(infos), "two containers for one key"
    return ids


async def _wait_for(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 20) -> None:
    """Poll ``check`` until true."""
    deadline = time.monotonic() + timeout_s
    delay = 0.02
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.5)


async def test_container_is_hardened_and_labelled(
    docker: aiodocker.Docker, data_dir: Path, make: Make, thread_id: str
) -> None:
    config = container_config(
        data_dir,
        limits={"processes": 64, "memory_bytes": 256 * 2**20, "cpu_cores": 0.5},
    )
    provider: ContainerSandboxProvider = make(config)
    sandbox = await provider.acquire("alice", thread_id)
    assert isinstance(sandbox, ContainerSandbox)
    r = await sandbox.execute(
        "id -u; grep CapEff /proc/self/status; touch /etc/x 2>&1 | head -n 1; "
        "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; ls /var/run/docker.sock"
    )
    lines = r.stdout.splitlines()
    assert lines[0] != "0"
    assert lines[1].split() == ["CapEff:", "0000000000000000"]
    assert "Read-only file system" in lines[2]
    assert lines[3:4] == ["lo"] and len(lines) == 4  # no interface but loopback
    assert "No such file" in r.stderr
    infos = await _containers(docker, config.sandbox.container.instance)
    assert len(infos) == 1
    info = infos[0]
    labels = info["Config"]["Labels"]  # type: ignore[index]
    assert labels[cs.LABEL_SANDBOX] == "1"
    assert labels[cs.LABEL_KEY] == f"t:alice/{thread_id}"
    assert labels[cs.LABEL_THREAD] == thread_id
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"  # type: ignore[index]
    assert host["ReadonlyRootfs"] is True  # type: ignore[index]
    assert host["CapDrop"] == ["ALL"]  # type: ignore[index]
    assert host["Privileged"] is False  # type: ignore[index]
    assert host["PidsLimit"] == 64  # type: ignore[index]
    assert host["Memory"] == 256 * 2**20  # type: ignore[index]
    assert host["NanoCpus"] == 500_000_000  # type: ignore[index]
    assert "no-new-privileges:true" in host["SecurityOpt"]  # type: ignore[index]
    assert info["Config"]["User"].split(":")[0] not in ("", "0", "root")  # type: ignore[index]
    mounts = info["Mounts"]
    assert isinstance(mounts, list)
    assert sorted(m["Destination"] for m in mounts) == [
        "/mnt/user-data/outputs",
        "/mnt/user-data/uploads",
        "/mnt/user-data/workspace",
    ]
    assert all(m["RW"] for m in mounts)
    assert not any("docker.sock" in str(m["Source"]) for m in mounts)


async def test_limits_hold_inside(data_dir: Path, make: Make, thread_id: str) -> None:
    config = container_config(
        data_dir,
        command_timeout_s=60,
        limits={"processes": 40, "memory_bytes": 96 * 2**20, "file_size_bytes": 2**20},
    )
    sandbox = await make(config).acquire("alice", thread_id)
    fork = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(80):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(3)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError as exc:\n"
        "    print(exc.errno)\n"
        "print(n)\n"
    )
    await sandbox.write_file("fork.py", fork)
    r = await sandbox.execute("python3 fork.py")
    errno, started = r.stdout.split()
    assert errno == "11" and int(started) < 40  # EAGAIN: the container's pids limit
    r = await sandbox.execute("python3 -c 'b = bytearray(400 * 2**20); print(len(b))'")
    assert r.exit_code != 0 and "419430400" not in r.stdout
    r = await sandbox.execute("head -c 3000000 /dev/zero > big.bin; echo $?; stat -c %s big.bin")
    assert r.stdout.split()[-1] == str(2**20)


async def test_warm_reuse_idle_timeout_and_egress(
    docker: aiodocker.Docker, data_dir: Path, make: Make
) -> None:
    config = container_config(
        data_dir, network=True, container={"idle_timeout_s": 0.5, "network_name": "bridge"}
    )
    provider: ContainerSandboxProvider = make(config)
    sandbox = await provider.acquire("alice", _tid())
    await sandbox.execute("true")
    first = await _ids(docker, provider)
    await sandbox.execute("true")
    assert await _ids(docker, provider) == first  # warm: the same container
    infos = await _containers(docker, config.sandbox.container.instance)
    assert infos[0]["HostConfig"]["NetworkMode"] == "bridge"  # type: ignore[index]

    async def gone() -> bool:
        return not await _containers(docker, config.sandbox.container.instance)

    await _wait_for(gone, "the idle container to be removed")


async def test_cap_replaces_idle_and_refuses_when_all_busy(
    docker: aiodocker.Docker, data_dir: Path, make: Make
) -> None:
    config = container_config(data_dir, container={"max_containers": 1, "queue_timeout_s": 0.3})
    provider: ContainerSandboxProvider = make(config)
    a = await provider.acquire("alice", _tid())
    b = await provider.acquire("alice", _tid())
    await a.execute("true")
    (a_id,) = (await _ids(docker, provider)).values()
    await b.execute("true")  # a's idle container makes room
    (b_id,) = (await _ids(docker, provider)).values()
    assert b_id != a_id
    infos = await _containers(docker, config.sandbox.container.instance)
    assert [i["Id"] for i in infos] == [b_id]
    busy = asyncio.create_task(b.execute("sleep 5", timeout_s=3))

    async def is_busy() -> bool:
        return any(live.busy for live in provider.pool._live.values())

    await _wait_for(is_busy, "the command to start")
    with pytest.raises(SandboxError, match="max_containers"):
        await a.execute("true")
    assert (await busy).timed_out


async def test_orphans_are_adopted_or_removed(
    docker: aiodocker.Docker, data_dir: Path, make: Make, thread_id: str
) -> None:
    config = container_config(data_dir)
    instance = config.sandbox.container.instance
    first = ContainerSandboxProvider(config)
    sb = await first.acquire("alice", thread_id)
    await sb.execute("echo state > /tmp/kept")
    (old,) = (await _ids(docker, first)).values()
    await first.close(keep_containers=True)  # as after a crash: the container stays
    assert [i["Id"] for i in await _containers(docker, instance)] == [old]

    adopter: ContainerSandboxProvider = make(config)
    sb = await adopter.acquire("alice", thread_id)
    r = await sb.execute("cat /tmp/kept")
    assert r.stdout == "state\n"  # the same container, warm
    assert await _ids(docker, adopter) == {f"t:alice/{thread_id}": old}
    await adopter.close(keep_containers=True)

    remover: ContainerSandboxProvider = make(
        config.model_copy(
            update={
                "sandbox": config.sandbox.model_copy(
                    update={
                        "container": config.sandbox.container.model_copy(
                            update={"orphans": "remove"}
                        )
                    }
                )
            }
        )
    )
    await remover.start()
    assert await _containers(docker, instance) == []


async def test_user_scope_shares_one_container_per_user(
    docker: aiodocker.Docker, data_dir: Path, make: Make
) -> None:
    config = container_config(data_dir, container={"scope": "user"})
    provider: ContainerSandboxProvider = make(config)
    t1, t2 = _tid(), _tid()
    s1 = await provider.acquire("alice", t1)
    s2 = await provider.acquire("alice", t2)
    s3 = await provider.acquire("bob", _tid())
    r = await s1.execute("pwd; echo one > /mnt/user-data/outputs/o.txt; ls /mnt/threads")
    assert r.stdout.splitlines()[0] == "/mnt/user-data/workspace"
    r = await s2.execute("cat /mnt/user-data/outputs/o.txt 2>&1; echo two > x.txt")
    assert "No such file" in r.stdout  # its own thread's folders
    assert await s1.read_file("/mnt/user-data/outputs/o.txt") == "one\n"
    assert await s2.read_file("x.txt") == "two\n"
    await s3.execute("true")
    assert sorted(await _ids(docker, provider)) == ["u:alice", "u:bob"]


async def test_clear_errors_without_engine_or_image(data_dir: Path, thread_id: str) -> None:
    config = container_config(data_dir, container={"docker_url": "unix:///nonexistent.sock"})
    provider = ContainerSandboxProvider(config)
    with pytest.raises(SandboxError, match="unreachable"):
        await provider.acquire("alice", thread_id)
    await provider.close()
    config = container_config(data_dir, container={"image": "pronghorn-no-such-image:0"})
    provider = ContainerSandboxProvider(config)
    sb = await provider.acquire("alice", thread_id)
    with pytest.raises(SandboxError, match=r"image is missing.*sandbox\.Dockerfile"):
        await sb.execute("true")
    await provider.close()


async def test_a_container_killed_from_outside_is_made_anew(
    docker: aiodocker.Docker, data_dir: Path, make: Make, thread_id: str
) -> None:
    provider = make(container_config(data_dir))
    sandbox = await provider.acquire("alice", thread_id)
    await sandbox.write_file("kept.txt", "files survive\n")
    await sandbox.execute("true")
    (old,) = (await _ids(docker, provider)).values()
    await (await docker.containers.get(old)).kill()
    r = await sandbox.execute("cat kept.txt")
    assert (r.exit_code, r.stdout) == (0, "files survive\n")

    async def old_removed() -> bool:  # the dead one is removed in the background
        return len(await _containers(docker, provider.config.container.instance)) == 1

    await _wait_for(old_removed, "the killed container to be removed")
    (new,) = (await _ids(docker, provider)).values()
    assert new != old
    await (await docker.containers.get(new)).delete(force=True)
    r = await sandbox.execute("echo again")
    assert r.stdout == "again\n"


class _Skills:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def mounts_for(self, user_id: str) -> tuple[ReadOnlyMount, ...]:
        return (ReadOnlyMount("/mnt/skills/public/demo", self.folder),)


async def test_skills_are_mounted_read_only(
    docker: aiodocker.Docker, data_dir: Path, tmp_path: Path, thread_id: str
) -> None:
    skill = tmp_path / "demo"
    skill.mkdir()
    (skill / "SKILL.md").write_text("# Demo skill\n")
    provider = ContainerSandboxProvider(container_config(data_dir), mounts=_Skills(skill))
    try:
        sandbox = await provider.acquire("alice", thread_id)
        r = await sandbox.execute(
            "cat /mnt/skills/public/demo/SKILL.md; touch /mnt/skills/public/demo/x 2>&1"
        )
        assert r.stdout.startswith("# Demo skill\n")
        assert "Read-only file system" in r.stdout
        assert await sandbox.read_file("/mnt/skills/public/demo/SKILL.md") == "# Demo skill\n"
        (info,) = await _containers(docker, provider.config.container.instance)
        mounts = {m["Destination"]: m["RW"] for m in info["Mounts"]}  # type: ignore[union-attr]
        assert mounts["/mnt/skills/public/demo"] is False
    finally:
        await provider.close()
