"""The server process's app (`pronghorn serve`'s factory) freezes what is alive once it has
started and enlarges the collector's youngest generation (gateway/gc_tuning.py); an app
built by any other host (the in-process test server, an embedding program) leaves the
host's collector as it was. Each case starts an app in a fresh interpreter, whose collector
this test process's own settings cannot mask."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from support.live import TESTS_DIR, base_config

_PROBE = """
import asyncio, gc, json, os, sys
from pathlib import Path
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import app_from_env, create_app

if sys.argv[1] == "serve":
    app = app_from_env()
else:
    app = create_app(ConfigHolder(load_config(Path(os.environ["PRONGHORN_CONFIG"]))))

async def main():
    before = {"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()}
    async with app.router.lifespan_context(app):
        started = {"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()}
    print(json.dumps({"before": before, "started": started}))

asyncio.run(main())
"""


def _start(tmp_path: Path, how: str) -> dict[str, dict[str, object]]:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(base_config()), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRONGHORN_")}
    env |= {
        "PRONGHORN_CONFIG": str(config),
        "PRONGHORN_BASE_DIR": str(tmp_path),
        "PYTHONPATH": os.pathsep.join((str(TESTS_DIR), env.get("PYTHONPATH", ""))),
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, how],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
        cwd=tmp_path,
        env=env,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_servers_app_freezes_what_it_started_with(tmp_path: Path) -> None:
    got = _start(tmp_path, "serve")
    assert got["before"]["frozen"] == 0
    # the imported gateway and its started runtime: some 300,000 objects
    assert isinstance(got["started"]["frozen"], int) and got["started"]["frozen"] > 50_000
    before, started = got["before"]["threshold"], got["started"]["threshold"]
    assert isinstance(before, list) and isinstance(started, list)
    assert started == [10_000, *before[1:]]


def test_an_app_built_by_another_host_leaves_its_collector_alone(tmp_path: Path) -> None:
    got = _start(tmp_path, "embedded")
    assert got["started"] == got["before"]
    assert got["started"]["frozen"] == 0
