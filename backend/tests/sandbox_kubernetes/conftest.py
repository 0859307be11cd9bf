"""A fake Kubernetes API (fakes/kube_api.py) and providers pointed at it; the data dir is the
fake's PersistentVolumeClaim ``pronghorn-data``, as a shared volume would be."""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from fakes.kube_api import FakeKubeApi
from pronghorn.config.schema.app import AppConfig
from pronghorn.sandbox.kubernetes.provider import KubernetesSandboxProvider

CLAIM = "pronghorn-data"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def kube(data_dir: Path) -> Iterator[FakeKubeApi]:
    with FakeKubeApi(claims={CLAIM: data_dir}, token="api-token") as api:
        yield api


@pytest.fixture
def thread_id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def agent_port() -> int:
    return free_port()


MakeConfig = Callable[..., AppConfig]
MakeProvider = Callable[..., KubernetesSandboxProvider]


@pytest.fixture
def make_config(kube: FakeKubeApi, data_dir: Path, agent_port: int) -> MakeConfig:
    def make(*, sandbox: dict[str, object] | None = None, **k8s: object) -> AppConfig:
        settings: dict[str, object] = {
            "api_url": kube.base_url,
            "api_token": "api-token",
            "agent_port": agent_port,
            "data_volume_claim": CLAIM,
            "agent_token_key": "a-test-key-of-enough-length",
            "start_timeout_s": 30,
            **k8s,
        }
        return AppConfig.model_validate(
            {
                "data_dir": str(data_dir),
                "sandbox": {
                    "kind": "kubernetes",
                    "command_timeout_s": 20,
                    **(sandbox or {}),
                    "kubernetes": settings,
                },
            }
        )

    return make


@pytest.fixture
async def make_provider(make_config: MakeConfig, clock: FakeClock) -> AsyncIterator[MakeProvider]:
    made: list[KubernetesSandboxProvider] = []

    def make(
        *, sandbox: dict[str, object] | None = None, **k8s: object
    ) -> KubernetesSandboxProvider:
        provider = KubernetesSandboxProvider(make_config(sandbox=sandbox, **k8s), clock=clock)
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.close()
