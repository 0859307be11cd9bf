"""`auth.mode: none` starts only on loopback, and warns on every start."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from support.live import LiveServer, base_config


def test_none_is_refused_on_a_wide_bind(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "wide", base_config(server={"host": "0.0.0.0"}))
    with pytest.raises(RuntimeError, match="server exited early") as exc:
        server.start()
    assert "auth.mode: none is refused" in str(exc.value)
    assert server.proc is not None and server.proc.returncode != 0


def test_none_on_loopback_warns_and_everyone_is_the_local_admin(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server()  # base_config: auth none, 127.0.0.1
    assert "auth.mode is none" in server.logs()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/api/auth/config").json() == {
            "mode": "none",
            "setup_required": False,
            "oidc": None,
        }
        me = http.get("/api/auth/me").json()
        assert me["user"]["role"] == "admin" and me["csrf_token"] is None
        assert http.post("/api/langgraph/threads/search", json={}).status_code == 200
        login = http.post("/api/auth/login", json={"username": "a", "password": "b"})
        assert login.status_code == 400
    assert not (server.workdir / "data" / "setup-token").exists()
