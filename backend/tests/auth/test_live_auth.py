"""auth.mode local against a live server: setup, login, sessions and CSRF, API keys through
the official SDK, revocation, admin user management and the audit log."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from langgraph_sdk.errors import AuthenticationError

from auth.authkit import ADMIN, ADMIN_PASSWORD, AuthedServer
from support.sdk import SdkFactory


def test_first_run_setup_flow(authed: AuthedServer) -> None:
    rec = authed.record
    assert rec.link_in_log  # printed on stderr, Jupyter style
    assert rec.token_file_mode == 0o600
    assert rec.config_before == {"mode": "local", "setup_required": True, "oidc": None}
    assert rec.wrong_token.status_code == 403
    assert rec.setup.status_code == 201, rec.setup.text
    body = rec.setup.json()
    assert body["user"]["username"] == ADMIN and body["user"]["role"] == "admin"
    assert body["user"]["display_name"] == "The Admin" and body["csrf_token"]
    assert set(body["user"]) == {
        "id",
        "username",
        "email",
        "display_name",
        "role",
        "disabled",
        "created_at",
    }
    assert body["user"]["email"] is None
    cookie = rec.setup.headers["set-cookie"]
    assert "pronghorn_session=" in cookie and "HttpOnly" in cookie
    assert "SameSite=lax" in cookie.replace("Lax", "lax") and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http, no trusted proxy
    assert not rec.token_file_after  # spent
    assert rec.second_setup.status_code == 409
    with authed.client() as http:
        assert http.get("/api/auth/config").json()["setup_required"] is False


def test_strangers_get_401_everywhere(authed: AuthedServer) -> None:
    with authed.client() as http:
        for method, path in [
            ("POST", "/api/langgraph/threads/search"),
            ("POST", "/api/langgraph/threads"),
            ("GET", "/api/langgraph/assistants/search"),
            ("POST", "/api/langgraph/assistants/search"),
            ("POST", "/api/langgraph/runs/crons/search"),
            ("POST", "/api/langgraph/store/items/search"),
            ("GET", "/api/langgraph/info"),
            ("GET", "/api/config/status"),
            ("GET", "/api/auth/me"),
            ("GET", "/api/auth/keys"),
            ("GET", "/api/auth/users"),
            ("GET", "/api/auth/audit"),
        ]:
            resp = http.request(method, path, json={})
            assert resp.status_code == 401, (method, path, resp.text)
            assert "detail" in resp.json()
        # A made-up cookie or key is no better.
        http.cookies.set("pronghorn_session", "forged")
        assert http.post("/api/langgraph/threads/search", json={}).status_code == 401
        resp = http.get("/api/auth/me", headers={"x-api-key": "phk_" + "x" * 43})
        assert resp.status_code == 401 and resp.json()["detail"] == "Invalid API key"
        # Public: probes, auth config, the login endpoint itself.
        assert http.get("/health").status_code == 200
        assert http.get("/api/auth/config").status_code == 200


def test_login_me_logout(authed: AuthedServer) -> None:
    with authed.client() as http:
        bad = http.post("/api/auth/login", json={"username": ADMIN, "password": "wrong-pass"})
        unknown = http.post("/api/auth/login", json={"username": "nobody", "password": "x" * 9})
        assert bad.status_code == unknown.status_code == 401
        assert bad.json() == unknown.json()  # nothing tells which usernames exist
        # Usernames are case-insensitive.
        resp = http.post("/api/auth/login", json={"username": "ROOT", "password": ADMIN_PASSWORD})
        assert resp.status_code == 200
        csrf = resp.json()["csrf_token"]
        me = http.get("/api/auth/me").json()
        assert me["user"]["username"] == ADMIN and me["csrf_token"] == csrf
        assert (
            http.post(
                "/api/langgraph/threads/search", json={}, headers={"X-CSRF-Token": csrf}
            ).status_code
            == 200
        )
        out = http.post("/api/auth/logout", headers={"X-CSRF-Token": csrf})
        assert out.status_code == 204
        assert (
            'pronghorn_session=""' in out.headers["set-cookie"]
            or "Max-Age=0" in out.headers["set-cookie"]
        )
        assert http.get("/api/auth/me").status_code == 401


def test_cookie_writes_need_the_csrf_token_and_same_origin(authed: AuthedServer) -> None:
    browser = authed.login()
    http = browser.http
    path = "/api/langgraph/threads"
    assert http.post(path, json={}).status_code == 403  # no token
    assert http.post(path, json={}, headers={"X-CSRF-Token": "wrong"}).status_code == 403
    resp = http.post(
        path,
        json={},
        headers={"X-CSRF-Token": browser.csrf, "Origin": "http://evil.example"},
    )
    assert resp.status_code == 403
    # The same origin as the Host, with the token: fine. Reads need no token.
    own = authed.url
    ok = http.post(path, json={}, headers={"X-CSRF-Token": browser.csrf, "Origin": own})
    assert ok.status_code == 200, ok.text
    thread_id = ok.json()["thread_id"]
    assert http.get(f"/api/langgraph/threads/{thread_id}").status_code == 200
    assert http.delete(f"/api/langgraph/threads/{thread_id}").status_code == 403
    assert browser.delete(f"/api/langgraph/threads/{thread_id}").status_code == 204


async def test_official_sdk_with_api_keys(authed: AuthedServer, sdk_client: SdkFactory) -> None:
    admin = authed.login()
    key = authed.new_key(admin, "sdk")
    assert key["key"].startswith("phk_") and key["prefix"] == key["key"][:12]
    assert {"id", "name", "prefix", "key", "created_at", "expires_at"} <= set(key)
    listed = admin.get("/api/auth/keys").json()
    assert [k["id"] for k in listed if k["id"] == key["id"]] and all("key" not in k for k in listed)

    client = sdk_client(url=f"{authed.url}/api/langgraph", api_key=key["key"])
    thread = await client.threads.create()
    run = await client.runs.wait(thread["thread_id"], "echo", input={"messages": []})
    assert run is not None
    found = await client.threads.search()
    assert thread["thread_id"] in [t["thread_id"] for t in found]
    # Authorization: Bearer works too.
    with authed.client() as http:
        resp = http.post(
            "/api/langgraph/threads/search",
            json={},
            headers={"Authorization": f"Bearer {key['key']}"},
        )
        assert resp.status_code == 200
        me = http.get("/api/auth/me", headers={"x-api-key": key["key"]}).json()
        assert me["user"]["username"] == ADMIN and me["csrf_token"] is None
    # last_used_at is written on use.
    listed = {k["id"]: k for k in admin.get("/api/auth/keys").json()}
    assert listed[key["id"]]["last_used_at"] is not None

    # Revoked: refused at once.
    assert admin.delete(f"/api/auth/keys/{key['id']}").status_code == 204
    with pytest.raises(AuthenticationError):
        await client.threads.search()
    # Someone else's key id (or a made-up one) is a 404.
    assert admin.delete(f"/api/auth/keys/{uuid.uuid4()}").status_code == 404


async def test_expired_key_is_refused(authed: AuthedServer, sdk_client: SdkFactory) -> None:
    admin = authed.login()
    key = authed.new_key(admin, "short", expires_in_days=0.00002)  # about 1.7 s
    client = sdk_client(url=f"{authed.url}/api/langgraph", api_key=key["key"])
    deadline = asyncio.get_running_loop().time() + 60
    while True:  # wait for the expiry by polling the key itself (no fixed sleep)
        try:
            await client.threads.search(limit=1)
        except AuthenticationError as exc:
            assert "expired" in str(exc).lower() or "401" in str(exc)
            break
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)
    with authed.client() as http:
        resp = http.get("/api/auth/me", headers={"x-api-key": key["key"]})
        assert resp.status_code == 401 and resp.json()["detail"] == "API key expired"


def test_password_change_revokes_sessions(authed: AuthedServer) -> None:
    admin = authed.login()
    authed.new_user(admin, "carol", "carol-password-1")
    first, second = (
        authed.login("carol", "carol-password-1"),
        authed.login("carol", "carol-password-1"),
    )
    wrong = first.post(
        "/api/auth/password",
        json={"current_password": "nope-nope", "new_password": "carol-password-2"},
    )
    assert wrong.status_code == 403
    weak = first.post(
        "/api/auth/password",
        json={"current_password": "carol-password-1", "new_password": "short"},
    )
    assert weak.status_code == 422 and "password" in weak.json()["detail"]
    done = first.post(
        "/api/auth/password",
        json={"current_password": "carol-password-1", "new_password": "carol-password-2"},
    )
    assert done.status_code == 204
    assert first.get("/api/auth/me").status_code == 401
    assert second.get("/api/auth/me").status_code == 401  # the other session too
    with authed.client() as http:
        old = http.post(
            "/api/auth/login", json={"username": "carol", "password": "carol-password-1"}
        )
        assert old.status_code == 401
    assert authed.login("carol", "carol-password-2").get("/api/auth/me").status_code == 200


async def test_disable_revokes_sessions_and_keys(
    authed: AuthedServer, sdk_client: SdkFactory
) -> None:
    admin = authed.login()
    dave_id = authed.new_user(admin, "dave", "dave-password-1")
    dave = authed.login("dave", "dave-password-1")
    key = authed.new_key(dave, "dave-key")
    client = sdk_client(url=f"{authed.url}/api/langgraph", api_key=key["key"])
    await client.threads.search()
    # Not an admin: the admin endpoints are 403.
    assert dave.get("/api/auth/users").status_code == 403
    assert dave.get("/api/auth/audit").status_code == 403
    assert (
        dave.post("/api/auth/users", json={"username": "x1", "password": "p" * 10}).status_code
        == 403
    )
    resp = admin.patch(f"/api/auth/users/{dave_id}", json={"disabled": True})
    assert resp.status_code == 200 and resp.json()["disabled"] is True
    assert dave.get("/api/auth/me").status_code == 401
    with pytest.raises(AuthenticationError):
        await client.threads.search()
    with authed.client() as http:
        login = http.post(
            "/api/auth/login", json={"username": "dave", "password": "dave-password-1"}
        )
        assert login.status_code == 401


def test_admin_user_management(authed: AuthedServer) -> None:
    admin = authed.login()
    erin = admin.post(
        "/api/auth/users",
        json={"username": "Erin", "password": "erin-password", "display_name": "Erin E."},
    )
    assert erin.status_code == 201 and erin.json()["role"] == "user"
    dup = admin.post("/api/auth/users", json={"username": "ERIN", "password": "whatever-1"})
    assert dup.status_code == 409
    bad = admin.post("/api/auth/users", json={"username": "no spaces", "password": "whatever-1"})
    assert bad.status_code == 422
    role = admin.post("/api/auth/users", json={"username": "f", "password": "x" * 9, "role": "god"})
    assert role.status_code == 422
    users = {u["username"]: u for u in admin.get("/api/auth/users").json()}
    assert {"root", "Erin"} <= set(users)
    assert "password_hash" not in users["Erin"]
    promoted = admin.patch(f"/api/auth/users/{erin.json()['id']}", json={"role": "admin"})
    assert promoted.status_code == 200 and promoted.json()["role"] == "admin"
    assert admin.patch(f"/api/auth/users/{uuid.uuid4()}", json={"role": "user"}).status_code == 404
    extra = admin.patch(f"/api/auth/users/{erin.json()['id']}", json={"owner": "x"})
    assert extra.status_code == 422


def test_audit_log_records_and_pages(authed: AuthedServer) -> None:
    admin = authed.login()
    with authed.client() as http:
        http.post("/api/auth/login", json={"username": ADMIN, "password": "not-it-at-all"})
    first = admin.get("/api/auth/audit", params={"limit": 5})
    assert first.status_code == 200
    page = first.json()
    assert len(page) == 5 and [e["id"] for e in page] == sorted(
        (e["id"] for e in page), reverse=True
    )
    nxt = admin.get("/api/auth/audit", params={"limit": 5, "before": page[-1]["id"]}).json()
    assert nxt and nxt[0]["id"] < page[-1]["id"]
    everything = admin.get("/api/auth/audit", params={"limit": 500}).json()
    actions = {e["action"] for e in everything}
    assert {"setup", "setup.failed", "login", "login.failed", "key.create"} <= actions
    failed = next(e for e in everything if e["action"] == "login.failed")
    assert failed["client_ip"] == "127.0.0.1" and failed["target"] == ADMIN
    assert admin.get("/api/auth/audit", params={"limit": 0}).status_code == 422


def test_secrets_never_in_the_log(authed: AuthedServer) -> None:
    admin = authed.login()
    key = authed.new_key(admin, "log-check")
    with authed.client() as http:
        assert http.get("/api/auth/me", headers={"x-api-key": key["key"]}).status_code == 200
        status = http.get("/api/config/status", headers={"x-api-key": key["key"]})
        assert status.status_code == 200
    text = authed.server.logs()
    assert ADMIN_PASSWORD not in text and key["key"] not in text
    assert "carol-password" not in text and admin.csrf not in text
    assert key["key"] not in status.text and ADMIN_PASSWORD not in status.text


def test_sdk_errors_are_json(authed: AuthedServer) -> None:
    """A 409/404 from the auth API is {"detail"}, like every other error."""
    admin = authed.login()
    resp = admin.post("/api/auth/users", json={"username": ADMIN, "password": "x" * 10})
    assert resp.status_code == 409 and set(resp.json()) == {"detail"}


def test_login_body_is_validated(authed: AuthedServer) -> None:
    with authed.client() as http:
        assert http.post("/api/auth/login", json={"username": "x"}).status_code == 422
        assert (
            http.post(
                "/api/auth/login", content=b"{", headers={"content-type": "application/json"}
            ).status_code
            == 422
        )
        resp = http.post("/api/auth/login", json={"username": "x", "password": "y", "z": 1})
        assert resp.status_code == 422


def test_config_reload_is_audited(authed: AuthedServer) -> None:
    admin = authed.login()
    before = admin.get("/api/config/status").json()["version_hash"]
    config = dict(authed.server.config)
    config["agent"] = {**config.get("agent", {}), "title_max_chars": 42}
    authed.server.write_config(config)
    deadline = time.monotonic() + 60
    while admin.get("/api/config/status").json()["version_hash"] == before:
        assert time.monotonic() < deadline, "the config was not reloaded"
        time.sleep(0.1)
    deadline = time.monotonic() + 30
    while True:  # the listener records right after the swap
        entries = admin.get("/api/auth/audit", params={"limit": 20}).json()
        reloads = [e for e in entries if e["action"] == "config.reload"]
        if reloads:
            break
        assert time.monotonic() < deadline, "no config.reload entry"
        time.sleep(0.1)
    assert "agent.title_max_chars" in reloads[0]["detail"]["changed"]
    assert reloads[0]["actor"] is None


def test_config_path_is_shown_to_admins_only(authed: AuthedServer) -> None:
    admin = authed.login()
    authed.new_user(admin, "status-reader", "status-reader-password")
    reader = authed.login("status-reader", "status-reader-password")
    try:
        path = admin.get("/api/config/status").json()["source_path"]
        assert isinstance(path, str) and path.endswith((".yaml", ".yml")), path
        shown = reader.get("/api/config/status")
        assert shown.status_code == 200 and shown.json()["source_path"] is None
        assert path not in shown.text
    finally:
        for who in (admin, reader):
            who.http.close()
