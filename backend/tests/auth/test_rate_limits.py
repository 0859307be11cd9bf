"""Failed logins and key attempts are limited per client IP and per account (429 +
Retry-After); X-Forwarded-For names the client only when the peer is a trusted proxy."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from auth.authkit import ADMIN, ADMIN_PASSWORD, AuthedServer, local_config, set_up
from support.live import LiveServer


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthedServer]:
    config = local_config(
        auth={
            "trusted_proxies": ["127.0.0.1/32"],
            "max_failures_per_ip": 4,
            "max_failures_per_account": 3,
            "failure_window_s": 600,
        }
    )
    server = LiveServer(tmp_path_factory.mktemp("limits"), config).start()
    authed = AuthedServer(server, set_up(server))
    try:
        yield authed
    finally:
        authed.close()
        server.stop()


def _login(http: httpx.Client, ip: str, username: str, password: str) -> httpx.Response:
    return http.post(
        "/api/auth/login",
        json={"username": username, "password": password},
        headers={"X-Forwarded-For": ip},
    )


def test_account_limit_refuses_even_the_right_password(limited: AuthedServer) -> None:
    admin = limited.login()
    limited.new_user(admin, "mallory-target", "target-password")
    with limited.client() as http:
        # Three different client IPs, one account: the account's limit (3) trips.
        for n in range(3):
            assert (
                _login(http, f"203.0.113.{n}", "mallory-target", "guess-guess").status_code == 401
            )
        resp = _login(http, "203.0.113.50", "mallory-target", "target-password")
        assert resp.status_code == 429
        assert int(resp.headers["Retry-After"]) >= 1 and "detail" in resp.json()
        # Other accounts are not affected.
        assert _login(http, "203.0.113.51", ADMIN, ADMIN_PASSWORD).status_code == 200


def test_ip_limit_covers_logins_and_api_keys(limited: AuthedServer) -> None:
    ip = "198.51.100.7"
    with limited.client() as http:
        for n in range(2):
            assert _login(http, ip, f"nobody{n}", "whatever-1").status_code == 401
        for _ in range(2):
            bad = http.get("/api/auth/me", headers={"x-api-key": "phk_nope", "X-Forwarded-For": ip})
            assert bad.status_code == 401
        # Four failures from this client: everything it tries now is 429, a real key too.
        key = limited.new_key(limited.login(), "ip-limit")
        resp = http.get("/api/auth/me", headers={"x-api-key": key["key"], "X-Forwarded-For": ip})
        assert resp.status_code == 429 and int(resp.headers["Retry-After"]) >= 1
        assert _login(http, ip, ADMIN, ADMIN_PASSWORD).status_code == 429
        # Another client is fine.
        other = http.get(
            "/api/auth/me", headers={"x-api-key": key["key"], "X-Forwarded-For": "198.51.100.8"}
        )
        assert other.status_code == 200


def test_forwarded_for_names_the_client_for_a_trusted_proxy(limited: AuthedServer) -> None:
    with limited.client() as http:
        _login(http, "192.0.2.1, 192.0.2.99", "xff-probe", "wrong-password")
    admin = limited.login()
    entries = admin.get("/api/auth/audit", params={"limit": 500}).json()
    probe = next(e for e in entries if e["action"] == "login.failed" and e["target"] == "xff-probe")
    assert probe["client_ip"] == "192.0.2.99"  # the right-most hop the proxy saw


def test_forwarded_for_is_ignored_from_untrusted_peers(authed: AuthedServer) -> None:
    """`authed` trusts no proxy: a client cannot pick its own address."""
    with authed.client() as http:
        _login(http, "192.0.2.77", "xff-untrusted", "wrong-password")
        resp = http.post(
            "/api/auth/login",
            json={"username": ADMIN, "password": ADMIN_PASSWORD},
            headers={"X-Forwarded-Proto": "https"},
        )
        assert "Secure" not in resp.headers["set-cookie"]
    admin = authed.login()
    entries = admin.get("/api/auth/audit", params={"limit": 500}).json()
    probe = next(e for e in entries if e["target"] == "xff-untrusted")
    assert probe["client_ip"] == "127.0.0.1"


def test_secure_cookie_behind_a_trusted_tls_proxy(limited: AuthedServer) -> None:
    with limited.client() as http:
        resp = http.post(
            "/api/auth/login",
            json={"username": ADMIN, "password": ADMIN_PASSWORD},
            headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "192.0.2.200"},
        )
        assert resp.status_code == 200 and "Secure" in resp.headers["set-cookie"]
