"""scripts/smoke's reading of docker/Dockerfile (the smoke run itself is `make test-smoke`).

The smoke test starts the gateway with the image's environment, read from the Dockerfile's
runtime stage; these tests keep that reading honest without starting a server.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "smoke"


@pytest.fixture(scope="module")
def smoke() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("pronghorn_smoke_script", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG BASE=python:3.11-slim
FROM ${BASE} AS builder
ENV UV_PROJECT_ENVIRONMENT=/opt/venv \\
    BUILD_ONLY=1
FROM ${BASE} AS runtime
# a comment
ENV PATH="/opt/venv/bin:${PATH}" \\
    # comment inside a continuation
    PRONGHORN_DATA_DIR=/data \\
    QUOTED="two words" \\
    PRONGHORN_HOME=${HOME:-/home/x}/sub
ENV LEGACY value with spaces
WORKDIR /app
ENV PRONGHORN_CONFIG=/app/config.yaml
"""


def test_runtime_stage_reads_only_the_last_stage(smoke: ModuleType) -> None:
    declared, workdir = smoke.runtime_stage(DOCKERFILE, {"PATH": "/usr/bin:/bin"})
    assert declared == {
        "PATH": "/opt/venv/bin:/usr/bin:/bin",
        "PRONGHORN_DATA_DIR": "/data",
        "QUOTED": "two words",
        "PRONGHORN_HOME": "/home/x/sub",
        "LEGACY": "value with spaces",
        "PRONGHORN_CONFIG": "/app/config.yaml",
    }
    assert workdir == "/app"


def test_image_paths_are_mapped_component_wise(smoke: ModuleType, tmp_path: Path) -> None:
    mapping = {"/opt/venv": tmp_path / "venv", "/app": tmp_path / "app"}
    assert smoke.map_paths("/opt/venv/bin:/usr/bin", mapping) == f"{tmp_path}/venv/bin:/usr/bin"
    assert smoke.map_paths("/app", mapping) == f"{tmp_path}/app"
    assert smoke.map_paths("/application/x", mapping) == "/application/x"
    assert smoke.map_paths("0.0.0.0", mapping) == "0.0.0.0"


def test_the_real_dockerfile_gives_the_server_its_environment(
    smoke: ModuleType, tmp_path: Path
) -> None:
    env, cwd = smoke.image_environment(tmp_path, 43210)
    declared, _ = smoke.runtime_stage(smoke.DOCKERFILE.read_text(), {"PATH": "/usr/bin"})
    # Everything the runtime stage declares reaches the server, nothing of the builder's.
    assert set(declared) <= set(env) and "UV_PROJECT_ENVIRONMENT" not in env
    assert env["PRONGHORN_HOST"] == "127.0.0.1" and env["PRONGHORN_PORT"] == "43210"
    assert env["PRONGHORN_DATA_DIR"] == str(tmp_path / "data")
    assert env["PRONGHORN_WORKERS"] == declared["PRONGHORN_WORKERS"] == "1"
    # /opt/venv/bin becomes this venv's bin, which has `pronghorn`: the first folder of PATH
    # that exists here (the image's root-dropping `pronghorn` wrapper folder precedes it in
    # the image only).
    existing = [p for p in env["PATH"].split(":") if Path(p).is_dir()]
    assert existing[0] == str(Path(sys.prefix) / "bin")
    assert cwd == tmp_path / "app" and cwd.is_dir()
    # The image's /app paths (config, UI build) live under the temporary app folder.
    assert env["PRONGHORN_CONFIG"] == str(tmp_path / "app" / "config.yaml")
    assert env["PRONGHORN_SERVER__STATIC_DIR"] == str(tmp_path / "app" / "frontend" / "dist")
    # No key and no stray setting from the caller's environment.
    assert not {k for k in env if k.endswith("_API_KEY")}
    assert {k for k in env if k.startswith("PRONGHORN_")} == {
        k for k in declared if k.startswith("PRONGHORN_")
    }


def test_a_runtime_stage_without_the_serve_variables_fails(
    smoke: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM python:3.11-slim\nENV PRONGHORN_DATA_DIR=/data\n")
    monkeypatch.setattr(smoke, "DOCKERFILE", dockerfile)
    with pytest.raises(smoke.SmokeFailure, match="PRONGHORN_HOST, PRONGHORN_PORT"):
        smoke.image_environment(tmp_path / "t", 1)
