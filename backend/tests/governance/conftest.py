"""An in-process app with two users (isolation.appkit's KeyAuth) and a scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from isolation.appkit import App, KeyAuth
from pronghorn.auth.authorizer import AllowAll
from pronghorn.config.holder import ConfigHolder
from pronghorn.config.loader import load_config
from pronghorn.gateway.app import create_app
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from support.inproc import Lifespan
from support.live import base_config

RULES = [
    {"match": ["follow-up questions"], "text": "1. What next?\n- Why so?\n\nHow long?\nWhat next?"},
    {
        "match": ["use a tool"],
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "write_todos",
                        "args": {"todos": [{"content": "a", "status": "pending"}]},
                    }
                ]
            },
            {"text": "tool used"},
        ],
    },
    {"text": "hello there", "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}},
]


@pytest.fixture
async def two_users(tmp_path: Path) -> AsyncIterator[App]:
    cfg = base_config(
        models=[{"name": "s", "provider": "scripted", "rules": RULES}],
        agent={"default_model": "s"},
        uploads={"max_file_bytes": 4096, "max_total_bytes": 10_000},
    )
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    app = create_app(ConfigHolder(load_config(path, {})), base_dir=tmp_path)
    lifespan = Lifespan(app)  # its own task: the MCP endpoint's task group is entered there
    await lifespan.startup()
    try:
        runtime: AppRuntime = app.state.runtime
        runtime.authenticator = KeyAuth()
        runtime.authorizer = AllowAll()
        yield App(app, runtime, runtime.data_dir)
    finally:
        await lifespan.shutdown()
