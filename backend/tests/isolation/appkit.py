"""Two users (and an admin) against one in-process app, through the official Python SDK.

The app is the one `pronghorn serve` builds (`create_app`, its lifespan run in-process);
once it has started, the test swaps the runtime's authenticator for `KeyAuth`, which maps
the API keys `alice`, `bob` and `admin` to principals. That is a test-only move on the
started AppRuntime (the authenticator is a plain attribute read per request), not a config
option: nothing in config can reach it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import FastAPI
from langgraph_sdk.client import LangGraphClient

from pronghorn.auth.authenticator import AuthError, Credentials
from pronghorn.auth.authorizer import Authorizer
from pronghorn.auth.principal import Principal
from pronghorn.runtime.wiring.app_runtime import AppRuntime

BASE = "http://localhost"
API = f"{BASE}/api/langgraph"

PRINCIPALS = {
    "alice": Principal(identity="alice", display_name="Alice", kind="api_key", username="alice"),
    "bob": Principal(
        identity="bob@example.org",  # not a safe folder name: the owner folder is a digest
        display_name="Bob",
        kind="api_key",
        username="bob",
        permissions=("threads:write",),
        extra={"team": "blue"},
    ),
    "admin": Principal(
        identity="root", display_name="Admin", role="admin", kind="api_key", username="root"
    ),
}


class KeyAuth:
    """`x-api-key: <name>` (or `Authorization: Bearer <name>`) of a known principal."""

    async def authenticate(self, credentials: Credentials) -> Principal:
        key = credentials.headers.get("x-api-key")
        bearer = credentials.headers.get("authorization", "")
        if key is None and bearer.lower().startswith("bearer "):
            key = bearer[7:]
        if key in PRINCIPALS:
            return PRINCIPALS[key]
        raise AuthError("Missing or invalid API key")


@dataclass
class App:
    app: FastAPI
    runtime: AppRuntime
    data_dir: Path

    def http(self, key: str | None, **headers: str) -> httpx.AsyncClient:
        if key is not None:
            headers["x-api-key"] = key
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url=BASE, headers=headers
        )

    def sdk(self, key: str, **headers: str) -> LangGraphClient:
        """The official SDK client over the in-process app (as `get_client(api_key=key)`)."""
        headers["x-api-key"] = key
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app),
            base_url=API,
            headers=headers,
            timeout=httpx.Timeout(120),
        )
        return LangGraphClient(client)

    def set_authorizer(self, authorizer: Authorizer) -> None:
        self.runtime.authorizer = authorizer
        self.runtime.runs.authorizer = authorizer
