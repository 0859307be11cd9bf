"""DeerFlow's login, account and logout calls (`/api/v1/auth/*`) on Pronghorn's sessions:
its form login by username or email, the `access_token` + `csrf_token` cookies its Next
server and fetcher use, the CSRF header its writes send, revocation and the audit log."""

from __future__ import annotations

import re
import uuid

import httpx

from deerflow_b.conftest import ADMIN
from deerflow_b.shapes_b import SETUP_STATUS, USER, USER_ROLES, ZOD_EMAIL, check_shape
from support.inproc import InProcessServer

PASSWORD = "a long enough password"


def _new_user(admin: httpx.Client, **extra: object) -> tuple[str, str]:
    name = f"df-{uuid.uuid4().hex[:8]}"
    body = {"username": name, "password": PASSWORD, **extra}
    resp = admin.post("/api/auth/users", json=body)
    assert resp.status_code == 201, resp.text
    return name, resp.json()["id"]


def _login(http: httpx.Client, name: str, password: str = PASSWORD) -> httpx.Response:
    form = {"username": name, "password": password, "remember_me": "true"}
    return http.post("/api/v1/auth/login/local", data=form)


def test_login_by_email_sets_the_cookies_deerflow_reads(
    app: InProcessServer, admin: httpx.Client
) -> None:
    email = f"{uuid.uuid4().hex[:8]}@example.com"
    name, user_id = _new_user(admin, email=email)
    with app.http() as http:
        status = http.get("/api/v1/auth/setup-status")
        assert status.status_code == 200
        check_shape(status.json(), SETUP_STATUS)
        assert status.json() == {"needs_setup": False, "registration_enabled": False}
        assert http.get("/api/v1/auth/providers").json() == {"providers": []}
        assert http.get("/api/v1/auth/me").status_code == 401

        resp = _login(http, email.upper())  # an email, in any case, names the account
        assert resp.status_code == 200, resp.text
        assert set(resp.json()) == {"expires_in", "needs_setup"}
        session_cookie = resp.cookies["access_token"]
        csrf = resp.cookies["csrf_token"]
        set_cookie = resp.headers.get_list("set-cookie")
        assert any(c.startswith("access_token=") and "HttpOnly" in c for c in set_cookie)
        assert any(c.startswith("csrf_token=") and "HttpOnly" not in c for c in set_cookie)

        me = http.get("/api/v1/auth/me")
        assert me.status_code == 200
        check_shape(me.json(), USER)
        assert me.json()["id"] == user_id and me.json()["email"] == email
        assert me.json()["system_role"] in USER_ROLES

        # DeerFlow's Next server asks with only the access_token cookie
        with app.http() as ssr:
            asked = ssr.get("/api/v1/auth/me", headers={"Cookie": f"access_token={session_cookie}"})
            assert asked.status_code == 200 and asked.json()["id"] == user_id

        # a write needs the csrf_token cookie's value in X-CSRF-Token, as for Pronghorn's UI
        assert http.post("/api/langgraph/threads", json={}).status_code == 403
        made = http.post("/api/langgraph/threads", json={}, headers={"X-CSRF-Token": csrf})
        assert made.status_code == 200, made.text

        out = http.post("/api/v1/auth/logout")
        assert out.status_code == 200 and out.json() == {"message": "Logged out"}
        assert http.get("/api/v1/auth/me").status_code == 401
    with app.http() as http:  # the ended session is gone server-side, not just forgotten
        gone = http.get("/api/v1/auth/me", headers={"Cookie": f"access_token={session_cookie}"})
        assert gone.status_code == 401
    with app.http() as http:  # and the username still logs in
        assert _login(http, name).status_code == 200


def test_a_user_without_an_email_gets_a_reserved_address(
    app: InProcessServer, admin: httpx.Client
) -> None:
    name, _ = _new_user(admin)
    with app.http() as http:
        assert _login(http, name).status_code == 200
        email = http.get("/api/v1/auth/me").json()["email"]
    assert email == f"{name}@pronghorn.invalid" and re.fullmatch(ZOD_EMAIL, email)


def test_wrong_password_is_401_counted_and_audited(
    app: InProcessServer, admin: httpx.Client
) -> None:
    email = f"{uuid.uuid4().hex[:8]}@example.org"
    name, _ = _new_user(admin, email=email)
    with app.http() as http:
        bad = _login(http, email, "wrong password!")
        assert bad.status_code == 401 and isinstance(bad.json()["detail"], str)
        assert "access_token" not in bad.cookies
        # the account's failure limit (5) counts logins by email and by username together
        for _ in range(2):
            assert _login(http, email, "wrong password!").status_code == 401
        for _ in range(2):
            assert _login(http, name, "wrong password!").status_code == 401
        locked = _login(http, name)
        assert locked.status_code == 429 and "Retry-After" in locked.headers
    entries = admin.get("/api/auth/audit", params={"limit": 500}).json()
    failed = [e for e in entries if e["action"] == "login.failed" and e["target"] == email]
    assert len(failed) >= 3


def test_change_password_revokes_old_sessions_and_keeps_this_browser(
    app: InProcessServer, admin: httpx.Client
) -> None:
    name, _ = _new_user(admin)
    with app.http() as other, app.http() as http:
        assert _login(other, name).status_code == 200
        assert _login(http, name).status_code == 200
        csrf = http.cookies["csrf_token"]
        body = {"current_password": PASSWORD, "new_password": "another long password"}
        assert http.post("/api/v1/auth/change-password", json=body).status_code == 403  # no CSRF
        wrong = {**body, "current_password": "not it at all"}
        refused = http.post(
            "/api/v1/auth/change-password", json=wrong, headers={"X-CSRF-Token": csrf}
        )
        assert refused.status_code == 400
        new_email = f"{name}@example.net"
        done = http.post(
            "/api/v1/auth/change-password",
            json={**body, "new_email": new_email},
            headers={"X-CSRF-Token": csrf},
        )
        assert done.status_code == 200, done.text
        assert http.get("/api/v1/auth/me").json()["email"] == new_email
        assert other.get("/api/v1/auth/me").status_code == 401
    with app.http() as http:
        assert _login(http, new_email, "another long password").status_code == 200


def test_setup_and_register_screens_answer_why_not(app: InProcessServer) -> None:
    with app.http() as http:
        assert http.post("/api/v1/auth/register", json={"email": "a@b.co"}).status_code == 403
        init = http.post("/api/v1/auth/initialize", json={"email": "a@b.co", "password": "x"})
        assert init.status_code == 409
        assert init.json()["code"] == "system_already_initialized"
        hostile = http.post(
            "/api/v1/auth/login/local",
            data={"username": ADMIN, "password": "x"},
            headers={"Origin": "https://evil.example"},
        )
        assert hostile.status_code == 403


def test_email_is_one_login_name(admin: httpx.Client) -> None:
    email = f"{uuid.uuid4().hex[:8]}@example.com"
    _new_user(admin, email=email)
    again = admin.post(
        "/api/auth/users",
        json={"username": "x" + uuid.uuid4().hex[:6], "password": PASSWORD, "email": email.upper()},
    )
    assert again.status_code == 409
    as_username = admin.post("/api/auth/users", json={"username": email, "password": PASSWORD})
    assert as_username.status_code == 409
    bad = admin.post(
        "/api/auth/users",
        json={
            "username": "y" + uuid.uuid4().hex[:6],
            "password": PASSWORD,
            "email": "not-an-email",
        },
    )
    assert bad.status_code == 422
