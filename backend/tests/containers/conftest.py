"""The compose stacks for real: a Docker engine (started here when none runs), the images
built offline from Debian packages, and the real `docker/docker-compose.yaml` with its
`.env` files. Where no engine can start, every test here skips with one message; with
PRONGHORN_REQUIRE_CONTAINERS=1 (CI) that is a failure instead.

`make test-containers` runs these (serially: the stacks are heavy); `make test` calls it."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from containers.compose import Stack, free_port
from containers.engine import Engine, EngineUnavailable, ensure_engine
from containers.images import REPO, Images, build_images

# Image builds (cold: minutes) happen in the first test's setup and stacks take a while to
# become healthy (healthchecks run every 15 s): each test module sets this as its timeout.
TIMEOUT = pytest.mark.timeout(1800)


@pytest.fixture(scope="session")
def engine() -> Engine:
    try:
        return ensure_engine()
    except EngineUnavailable as exc:
        message = f"container tests need a Docker engine: {exc}"
        if os.environ.get("PRONGHORN_REQUIRE_CONTAINERS") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def images(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Images:
    built = build_images(engine.docker, tmp_path_factory.mktemp("images") / "build.log")
    print(f"\nimages built in {built.build_s:.1f} s")
    return built


def example_config(**overrides: Any) -> dict[str, Any]:
    """config.example.yaml, as an operator copies it, with `overrides` merged one level deep."""
    cfg: dict[str, Any] = yaml.safe_load((REPO / "config.example.yaml").read_text())
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    return cfg


def _write_env(path: Path, template: Path, values: dict[str, str]) -> None:
    """`template` (an .env.example) with `values` set: replaced in place, or appended."""
    lines = template.read_text().splitlines()
    seen: set[str] = set()
    out: list[str] = []
    for line in lines:
        name = line.split("=", 1)[0].strip()
        if "=" in line and not line.lstrip().startswith("#") and name in values:
            out.append(f"{name}={values[name]}")
            seen.add(name)
        else:
            out.append(line)
    out += [f"{k}={v}" for k, v in values.items() if k not in seen]
    path.write_text("\n".join(out) + "\n")


def _free_subnet(engine: Engine) -> str:
    """A 172.31.x.0/24 no network of this engine uses (other projects, other tests)."""
    ids = subprocess.run(
        [engine.docker, "network", "ls", "-q"], capture_output=True, text=True, check=True
    ).stdout.split()
    used: set[str] = set()
    if ids:
        out = subprocess.run(
            [engine.docker, "network", "inspect", "-f", "{{json .IPAM.Config}}", *ids],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in out.splitlines():
            used |= {c.get("Subnet", "") for c in json.loads(line) or []}
    for third in range(200, 255):
        subnet = f"172.31.{third}.0/24"
        if subnet not in used:
            return subnet
    raise AssertionError(f"no free 172.31.x.0/24 subnet: {sorted(used)}")


@pytest.fixture(scope="module")
def make_stack(
    engine: Engine, images: Images, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Stack]]:
    """`make_stack(profiles, config=..., gateway_env=...)`: a compose project of its own
    (project and volume names, ports on 127.0.0.1, scale subnet); removed with its volumes
    at the end."""
    stacks: list[Stack] = []
    tmp_path = tmp_path_factory.mktemp("stacks")

    def make(
        profiles: list[str],
        config: dict[str, Any] | None = None,
        gateway_env: dict[str, str] | None = None,
    ) -> Stack:
        project = f"phtest{secrets.token_hex(4)}"
        workdir = tmp_path / project
        workdir.mkdir()
        (workdir / "config.yaml").write_text(yaml.safe_dump(config or example_config()))
        _write_env(workdir / "gateway.env", REPO / ".env.example", gateway_env or {})
        stack = Stack(engine=engine, project=project, workdir=workdir, profiles=profiles)
        _write_env(
            stack.env_file,
            REPO / "docker" / ".env.example",
            {
                "PRONGHORN_POSTGRES_PASSWORD": secrets.token_hex(12),
                "PRONGHORN_REDIS_PASSWORD": secrets.token_hex(12),
            },
        )
        subnet = _free_subnet(engine)
        stack.variables = {
            **{k: v for k, v in images.env.items() if k != "PRONGHORN_PYTHON_IMAGE"},
            "PRONGHORN_CONFIG_FILE": str(workdir / "config.yaml"),
            "PRONGHORN_ENV_FILE": str(workdir / "gateway.env"),
            "PRONGHORN_VOLUME_PREFIX": project,
            "PRONGHORN_PUBLISH_PORT": str(free_port()),
            "PRONGHORN_NGINX_BIND_HOST": "127.0.0.1",
            "PRONGHORN_HTTP_PORT": str(free_port()),
            "PRONGHORN_HTTPS_PORT": str(free_port()),
            "PRONGHORN_SCALE_PORT": str(free_port()),
            "PRONGHORN_SCALE_SUBNET": subnet,
        }
        stacks.append(stack)
        return stack

    yield make
    for stack in stacks:
        stack.down("--volumes", "--remove-orphans")


def create_api_key(stack: Stack, container: str) -> str:
    """An admin and an API key, made as an operator would: `pronghorn users create` and
    `pronghorn keys create` run in the gateway container."""
    password = secrets.token_urlsafe(16)
    done = stack.docker(
        "exec",
        "-i",
        container,
        "sh",
        "-c",
        f"printf '%s\\n' '{password}' | pronghorn users create admin --admin --password-stdin",
    )
    assert done.returncode == 0, done.stderr
    key = stack.exec(container, "pronghorn", "keys", "create", "admin")
    assert key.returncode == 0, key.stderr
    return key.stdout.strip().splitlines()[-1]
