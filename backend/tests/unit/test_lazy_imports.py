"""Starting the gateway or the CLI does not import what only an optional feature needs.

Every `pronghorn serve` (and every test server) imports `pronghorn.gateway.app`; a provider
SDK, a second database driver or a vendor library imported there is paid at each start even
when the config never uses it. Each module below is imported where its feature is used."""

from __future__ import annotations

import json
import subprocess
import sys

# What is loaded only once the feature it serves is used.
OPTIONAL = {
    "openai": "an OpenAI model is built, or a scripted step injects a provider error",
    "langchain_openai": "an OpenAI model is built",
    "langchain_anthropic": "an Anthropic model is built",
    "redis": "broker.kind or rate_limits.backend is redis",
    "psycopg": "the database is PostgreSQL",
    "asyncpg": "the database is PostgreSQL",
    "jwt": "an OIDC login",
    "ruamel": "the config file is edited through the API",
    "google.protobuf": "an A2A 1.0 request",
    "opentelemetry.exporter": "tracing.otlp.endpoint is set",  # (langsmith loads the SDK)
    "croniter": "a cron is created or scheduled",
    "cryptography": "a Feishu channel decrypts an event",
    "alembic": "the schema is migrated (the lifespan, `pronghorn migrate`, `users`, `keys`)",
}

# The CLI answers `--help`, `config check` and the account commands without the server.
CLI_UNUSED = {
    **OPTIONAL,
    "fastapi": "`pronghorn serve` (or `openapi`)",
    "uvicorn": "`pronghorn serve`",
    "langgraph": "`pronghorn serve`",
    "langchain_core": "`pronghorn serve`",
}

_PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
names = json.loads(sys.argv[2])
print(json.dumps(sorted(n for n in names if n in sys.modules)))
"""


def _loaded_by(module: str, names: dict[str, str]) -> dict[str, str]:
    """Which of `names` importing `module` loads, in a fresh interpreter (this test process
    has imported most of them already)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, module, json.dumps(list(names))],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {name: f"should wait until {names[name]}" for name in json.loads(done.stdout)}


def test_importing_the_gateway_loads_no_optional_library() -> None:
    assert _loaded_by("pronghorn.gateway.app", OPTIONAL) == {}


def test_the_cli_loads_neither_the_server_nor_an_optional_library() -> None:
    assert _loaded_by("pronghorn.cli", CLI_UNUSED) == {}
