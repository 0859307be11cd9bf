"""The Docker packaging passes scripts/check-docker, and the script catches real mistakes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "check-docker"

pytestmark = pytest.mark.skipif(
    shutil.which("uv") is None, reason="scripts/check-docker runs its tools through uv"
)


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=600,  # the first run may apt-get install nginx and shellcheck
        check=False,
    )


def test_packaging_passes_every_static_check() -> None:
    result = run_check()
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for expected in (
        "ok    hadolint Dockerfile",
        "ok    COPY sources present and not ignored",
        "ok    schema docker-compose.yaml",
        "ok    profile default: 1 services (gateway)",
        "ok    profile nginx+scale: 6 services (gateway, lb, nginx, postgres, redis, replica)",
        "ok    scale: postgres, redis, 3 replicas, lb (nginx-scale.conf)",
        "ok    profile monitoring: 3 services (gateway, grafana, prometheus)",
        "ok    dashboard pronghorn.json",
        "ok    monitoring files",
        "ok    nginx -t nginx.conf",
        "ok    nginx -t with the TLS block enabled",
        "ok    nginx -t nginx-scale.conf",
    ):
        assert expected in output, output


BROKEN_COMPOSE = """\
services:
  gateway:
    image: pronghorn:${TAG}
    ports: ["2026:2026"]
    depends_on: [postgres]
    volumes: ["undeclared:/data"]
    healthcheck: {test: ["CMD", "true"]}
  postgres:
    profiles: [scale]
    image: postgres:16
    ports: ["2026:5432"]
    healthcheck: {test: ["CMD", "true"]}
"""

BROKEN_DOCKERFILE = """\
FROM python:latest
COPY backend/does-not-exist /app/
COPY .env /app/.env
RUN apt-get install -y curl
"""


def test_script_fails_on_broken_inputs(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yaml"
    compose.write_text(BROKEN_COMPOSE)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(BROKEN_DOCKERFILE)
    nginx = tmp_path / "nginx.conf"
    nginx.write_text("events {}\nhttp { server { listen 80; proxy_pass http://gateway:2026; } }\n")
    ignore = tmp_path / "dockerignore"
    ignore.write_text("**/node_modules\n")

    result = run_check(
        "--compose", str(compose), "--dockerfile", str(dockerfile),
        "--nginx", str(nginx), "--dockerignore", str(ignore),
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for expected in (
        "FAIL  hadolint Dockerfile",  # latest tag, apt-get without cleanup
        "backend/does-not-exist: does not exist",
        ".env: should be excluded",
        "${TAG} has no default",
        "[default] gateway: depends on postgres, disabled by profile",
        "volume undeclared is not declared",
        "[scale] postgres: host port 2026 also used by gateway",
        "FAIL  nginx -t nginx.conf",  # proxy_pass outside a location
        "FAIL  scale profile lacks the redis service",
        "FAIL  replica: PRONGHORN_BROKER__KIND must be redis",
    ):
        assert expected in output, output
