"""`pronghorn doctor` with ``sandbox.kind: container``: engine reachable, image present,
limits enforceable — against the real engine, a missing image and no engine at all."""

from __future__ import annotations

from pathlib import Path

import yaml

from pronghorn.doctor import CheckResult, run_checks

from .conftest import container_config


async def _sandbox_check(tmp_path: Path, container: dict[str, object]) -> CheckResult:
    config = container_config(tmp_path / "data", container)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_defaults=True)))
    results = [r for r in await run_checks(str(path)) if r.name.startswith("sandbox")]
    assert len(results) == 1, [r.name for r in results]  # no bwrap checks for this kind
    return results[0]


async def test_green_on_the_real_engine(tmp_path: Path) -> None:
    result = await _sandbox_check(tmp_path, {})
    assert result.ok, result
    assert "limits enforceable" in result.detail and "network none" in result.detail
    assert result.data is not None and result.data["image_present"] is True


async def test_missing_image_and_unreachable_engine_fail_with_hints(tmp_path: Path) -> None:
    result = await _sandbox_check(tmp_path, {"image": "pronghorn-no-such-image:0"})
    assert not result.ok and "image is missing" in result.detail
    assert result.hint is not None and "sandbox.Dockerfile" in result.hint
    result = await _sandbox_check(tmp_path, {"docker_url": "unix:///nonexistent.sock"})
    assert not result.ok and "unreachable" in result.detail
    assert result.hint is not None and "docker_url" in result.hint
