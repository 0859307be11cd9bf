"""Servers for the agent-protocol tests: the lead agent on a scripted model and the echo
graph, without auth (`srv`) and with local accounts and API keys (`authed`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from pronghorn.auth import api_keys, users
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from support.inproc import InProcessServer
from support.live import base_config

RULES: list[dict[str, Any]] = [
    {
        "match": "usage please",
        "steps": [
            {
                "text": "Counted tokens for you",
                "usage": {"input_tokens": 11, "output_tokens": 4, "total_tokens": 15},
            }
        ],
    },
    {"match": "slow", "steps": [{"text": "never seen", "latency_s": 60}]},
    {"match": "break", "steps": [{"raise": "bad_request", "message": "scripted failure"}]},
]
MODELS: list[dict[str, Any]] = [
    {
        "name": "s",
        "provider": "scripted",
        "rules": RULES,
        "options": {"fallback": {"text": "Hello from the scripted lead agent"}},
    },
    {
        "name": "other",
        "provider": "scripted",
        "options": {"fallback": {"text": "The other model speaks"}},
    },
]


def protocol_config(**overrides: Any) -> dict[str, Any]:
    return base_config(
        graphs={"counter": "testgraphs.counter:graph", "agentish": "testgraphs.agentish:graph"},
        models=MODELS,
        agent={"default_model": "s"},
        sandbox={"isolation": "none"},
        **overrides,
    )


def runtime_of(server: InProcessServer) -> AppRuntime:
    return server.app.state.runtime  # type: ignore[attr-defined]


def on_server(server: InProcessServer, coro: Any, timeout: float = 60) -> Any:
    return asyncio.run_coroutine_threadsafe(coro, server.loop).result(timeout)


@dataclass
class Authed:
    server: InProcessServer
    alice_key: str
    bob_key: str


async def _user_key(runtime: AppRuntime, username: str) -> str:
    user = await users.create(runtime.db, username=username, password=None)
    _, secret = await api_keys.create(runtime.db, user.id, name="protocols")
    return secret


@pytest.fixture(scope="package")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    server = InProcessServer(tmp_path_factory.mktemp("protocols"), protocol_config()).start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def authed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Authed]:
    cfg = protocol_config(auth={"mode": "local"})
    server = InProcessServer(tmp_path_factory.mktemp("protocols-auth"), cfg).start()
    runtime = runtime_of(server)
    alice = on_server(server, _user_key(runtime, "alice"))
    bob = on_server(server, _user_key(runtime, "bob"))
    yield Authed(server, alice, bob)
    server.stop()
