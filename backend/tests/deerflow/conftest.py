"""An in-process app with two users (isolation.appkit's KeyAuth) and a scripted model, for
the contract tests of DeerFlow's screens. ``make_app(**overrides)`` starts one with extra
config (channels, memory...)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

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

RULES: list[dict[str, Any]] = [
    {
        "match": ["which colour"],
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "ask_clarification",
                        "args": {
                            "question": "Which colour do you want?",
                            "clarification_type": "approach_choice",
                            "options": ["red", "blue"],
                        },
                    }
                ]
            },
            {"text": "painted it"},
        ],
    },
    {"match": ["blue please"], "text": "painted it blue"},
    {"text": "hello there"},
]

StartApp = Callable[..., Awaitable[App]]


@pytest.fixture
async def make_app(tmp_path: Path) -> AsyncIterator[StartApp]:
    stack = contextlib.AsyncExitStack()

    async def start(**overrides: Any) -> App:
        cfg = base_config(
            models=[{"name": "s", "provider": "scripted", "rules": RULES}],
            agent={"default_model": "s"},
            uploads={"max_file_bytes": 4096, "max_total_bytes": 10_000},
            **overrides,
        )
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        app = create_app(ConfigHolder(load_config(path, {})), base_dir=tmp_path)
        lifespan = Lifespan(app)
        await lifespan.startup()
        stack.push_async_callback(lifespan.shutdown)
        runtime: AppRuntime = app.state.runtime
        runtime.authenticator = KeyAuth()
        runtime.authorizer = AllowAll()
        return App(app, runtime, runtime.data_dir)

    async with stack:
        yield start


@pytest.fixture
async def app(make_app: StartApp) -> App:
    return await make_app()
