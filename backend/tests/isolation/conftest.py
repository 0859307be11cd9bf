"""Fixtures of the isolation tests: an in-process app with two users (see appkit)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
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

StartApp = Callable[..., Awaitable[App]]


@pytest.fixture
async def make_app(tmp_path: Path) -> AsyncIterator[StartApp]:
    stack: list[Lifespan] = []

    async def start(**overrides: object) -> App:
        cfg = base_config(**overrides)
        cfg["graphs"] = {**cfg["graphs"], "whoami": "testgraphs.whoami:make_graph"}
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        app = create_app(ConfigHolder(load_config(path, {})), base_dir=tmp_path)
        lifespan = Lifespan(app)  # its own task: the MCP endpoint's task group is entered there
        await lifespan.startup()
        stack.append(lifespan)
        runtime: AppRuntime = app.state.runtime
        runtime.authenticator = KeyAuth()
        runtime.authorizer = AllowAll()
        return App(app, runtime, runtime.data_dir)

    yield start
    for lifespan in reversed(stack):
        await lifespan.shutdown()


@pytest.fixture
async def app(make_app: StartApp) -> App:
    return await make_app()
