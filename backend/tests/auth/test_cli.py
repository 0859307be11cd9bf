"""`pronghorn users` / `pronghorn keys` in a subprocess, on the database of a live server,
which then accepts what the CLI made."""

from __future__ import annotations

import subprocess

from langgraph_sdk import get_sync_client

from auth.authkit import AuthedServer


def cli(
    authed: AuthedServer, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return authed.server.cli(*args, stdin=stdin)


def test_users_create_and_list(authed: AuthedServer) -> None:
    made = cli(authed, "users", "create", "frank", "--password-stdin", stdin="frank-password-1\n")
    assert made.returncode == 0, made.stderr
    assert "created user frank" in made.stdout
    assert "frank-password-1" not in made.stdout + made.stderr
    dup = cli(authed, "users", "create", "FRANK", "--password-stdin", stdin="whatever-123\n")
    assert dup.returncode != 0 and "already exists" in dup.stderr
    listed = cli(authed, "users", "list")
    assert listed.returncode == 0
    assert any("frank" in line and " user " in line for line in listed.stdout.splitlines())
    # The server accepts the login of a CLI-made user at once.
    with authed.client() as http:
        login = http.post(
            "/api/auth/login", json={"username": "frank", "password": "frank-password-1"}
        )
        assert login.status_code == 200
    empty = cli(authed, "users", "create", "henry", "--password-stdin", stdin="")
    assert empty.returncode != 0 and "no password" in empty.stderr


def test_keys_create_list_revoke(authed: AuthedServer) -> None:
    admin = cli(
        authed, "users", "create", "grace", "--admin", "--password-stdin", stdin="grace-pass-1\n"
    )
    assert admin.returncode == 0 and "created admin grace" in admin.stdout
    key_out = cli(authed, "keys", "create", "grace", "--name", "laptop")
    assert key_out.returncode == 0, key_out.stderr
    key = key_out.stdout.strip().splitlines()[-1]
    assert key.startswith("phk_") and " " not in key
    with get_sync_client(url=f"{authed.url}/api/langgraph", api_key=key) as client:
        assert client.threads.create()["thread_id"]
    keys = cli(authed, "keys", "list", "grace")
    assert keys.returncode == 0 and "laptop" in keys.stdout and key not in keys.stdout
    key_id = keys.stdout.split()[0]
    assert cli(authed, "keys", "revoke", key_id).returncode == 0
    with authed.client() as http:
        assert http.get("/api/auth/me", headers={"x-api-key": key}).status_code == 401


def test_passwd_and_disable_end_sessions(authed: AuthedServer) -> None:
    made = cli(authed, "users", "create", "ivan", "--password-stdin", stdin="ivan-password-1\n")
    assert made.returncode == 0, made.stderr
    session = authed.login("ivan", "ivan-password-1")
    passwd = cli(authed, "users", "passwd", "ivan", "--password-stdin", stdin="ivan-password-2\n")
    assert passwd.returncode == 0, passwd.stderr
    assert session.get("/api/auth/me").status_code == 401  # the session ended
    again = authed.login("ivan", "ivan-password-2")
    assert cli(authed, "users", "disable", "ivan").returncode == 0
    assert again.get("/api/auth/me").status_code == 401
    missing = cli(authed, "users", "disable", "nobody-at-all")
    assert missing.returncode != 0 and "no user named" in missing.stderr
