"""Helpers for auth tests: the real setup flow on a live server, logging in, and calling the
API as a browser (cookie + CSRF) would."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from support.live import LiveServer, base_config

ADMIN = "root"
ADMIN_PASSWORD = "correct horse battery staple"


def local_config(**overrides: Any) -> dict[str, Any]:
    return base_config(auth={"mode": "local", **overrides.pop("auth", {})}, **overrides)


@dataclass
class SetupRecord:
    """What the module fixture saw while setting the server up."""

    link_in_log: bool
    token_file_mode: int
    config_before: dict[str, Any]
    wrong_token: httpx.Response
    setup: httpx.Response
    token_file_after: bool
    second_setup: httpx.Response
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class AuthedServer:
    server: LiveServer
    record: SetupRecord
    opened: list[httpx.Client] = field(default_factory=list[httpx.Client])

    def close(self) -> None:
        """Close every client `client()` and `login()` opened (the fixture's teardown)."""
        for http in self.opened:
            http.close()
        self.opened.clear()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def data_dir(self) -> Path:
        return self.server.workdir / "data"

    def client(self, **kwargs: Any) -> httpx.Client:
        http = httpx.Client(base_url=self.server.url, timeout=60, **kwargs)
        self.opened.append(http)
        return http

    def login(self, username: str = ADMIN, password: str = ADMIN_PASSWORD) -> Browser:
        http = self.client()
        resp = http.post("/api/auth/login", json={"username": username, "password": password})
        assert resp.status_code == 200, resp.text
        return Browser(http, resp.json()["csrf_token"], resp.json()["user"])

    def new_user(self, admin: Browser, username: str, password: str, role: str = "user") -> str:
        resp = admin.post(
            "/api/auth/users", json={"username": username, "password": password, "role": role}
        )
        assert resp.status_code == 201, resp.text
        return str(resp.json()["id"])

    def new_key(self, who: Browser, name: str = "k", **body: Any) -> dict[str, Any]:
        resp = who.post("/api/auth/keys", json={"name": name, **body})
        assert resp.status_code == 201, resp.text
        return dict(resp.json())


@dataclass
class Browser:
    """A logged-in cookie session that sends its CSRF token on writes, like the UI."""

    http: httpx.Client
    csrf: str
    user: dict[str, Any]

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.get(path, **kwargs)

    def _write(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf, **kwargs.pop("headers", {})}
        return self.http.request(method, path, headers=headers, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self._write("POST", path, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> httpx.Response:
        return self._write("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self._write("DELETE", path, **kwargs)


def set_up(server: LiveServer) -> SetupRecord:
    """The first-run flow: the token file and link, a wrong token, the real setup, a second."""
    token_file = server.workdir / "data" / "setup-token"
    token = token_file.read_text().strip()
    mode = token_file.stat().st_mode & 0o777
    with httpx.Client(base_url=server.url, timeout=60) as http:
        before = http.get("/api/auth/config").json()
        body = {"username": ADMIN, "password": ADMIN_PASSWORD, "display_name": "The Admin"}
        wrong = http.post("/api/auth/setup", json={**body, "token": "not-the-token"})
        done = http.post("/api/auth/setup", json={**body, "token": token})
        second = http.post("/api/auth/setup", json={**body, "username": "again", "token": token})
    return SetupRecord(
        link_in_log=f"/setup?token={token}" in server.logs(),
        token_file_mode=mode,
        config_before=before,
        wrong_token=wrong,
        setup=done,
        token_file_after=token_file.exists(),
        second_setup=second,
    )
