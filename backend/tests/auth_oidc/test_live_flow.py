"""SSO end to end: a live `pronghorn serve` (auth.mode local, auth.oidc at the fake
issuer) driven step by step with httpx, redirects followed by hand:
login -> issuer /authorize -> callback -> session cookie -> /api/auth/me."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest

from fakes.oidc_issuer import FakeOidcIssuer, IssuerUser, s256
from support.inproc import InProcessServer
from support.live import LiveServer, base_config

ADMIN_EMAIL = "boss@example.com"


@pytest.fixture(scope="module")
def issuer() -> Iterator[FakeOidcIssuer]:
    with FakeOidcIssuer(client_id="pronghorn", client_secret="s3cret") as fake:
        yield fake


@pytest.fixture(autouse=True)
def fresh_issuer(issuer: FakeOidcIssuer) -> None:
    issuer.user = IssuerUser()
    issuer.tweak = None


@pytest.fixture(scope="module")
def gateway(
    issuer: FakeOidcIssuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    auth = {
        "mode": "local",
        "max_failures_per_ip": 1000,  # this module refuses many logins on purpose
        "oidc": {
            "issuer": issuer.issuer,
            "client_id": "pronghorn",
            "client_secret": "${OIDC_SECRET}",
            "allowed_domains": ["example.com"],
            "admin_emails": [ADMIN_EMAIL],
            "label": "Sign in with Example",
        },
    }
    workdir: Path = tmp_path_factory.mktemp("oidc-live")
    server = LiveServer(workdir, base_config(auth=auth), {"OIDC_SECRET": "s3cret"}).start()
    yield server
    server.stop()


_OPENED: list[httpx.Client] = []


def _client(**kwargs: Any) -> httpx.Client:
    """A browser-like client on the live gateway, closed after the test (see `_close`)."""
    http = httpx.Client(**kwargs)
    _OPENED.append(http)
    return http


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().close()


def start_login(http: httpx.Client, gateway: LiveServer, next_path: str | None = None) -> str:
    """GET /login: the issuer's authorization URL (the login cookie lands in `http`)."""
    query = f"?{urlencode({'next': next_path})}" if next_path is not None else ""
    answer = http.get(f"{gateway.url}/api/auth/oidc/login{query}")
    assert answer.status_code == 302, answer.text
    assert "pronghorn_oidc_login" in answer.headers["set-cookie"]
    assert "httponly" in answer.headers["set-cookie"].lower()
    return answer.headers["location"]


def at_issuer(http: httpx.Client, url: str) -> str:
    """The issuer's /authorize: the callback URL it redirects to."""
    answer = http.get(url)
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def sign_in(
    gateway: LiveServer, next_path: str | None = None
) -> tuple[httpx.Client, httpx.Response]:
    http = _client(timeout=30)
    callback = at_issuer(http, start_login(http, gateway, next_path))
    return http, http.get(callback)


def me(http: httpx.Client, gateway: LiveServer) -> httpx.Response:
    return http.get(f"{gateway.url}/api/auth/me")


def test_auth_config_shows_the_sso_button(gateway: LiveServer) -> None:
    body = httpx.get(f"{gateway.url}/api/auth/config").json()
    assert body["mode"] == "local" and body["oidc"] == {"label": "Sign in with Example"}


def test_full_flow_then_a_second_login_reuses_the_user(
    gateway: LiveServer, issuer: FakeOidcIssuer
) -> None:
    issuer.user = IssuerUser(sub="sub-ann", email="ann@example.com", name="Ann Example")
    http = _client(timeout=30)
    authorize = start_login(http, gateway, "/chat/abc?x=1")
    params = dict(parse_qsl(urlsplit(authorize).query))
    assert authorize.startswith(f"{issuer.issuer}/authorize?")
    assert params["redirect_uri"] == f"{gateway.url}/api/auth/oidc/callback"
    assert params["code_challenge_method"] == "S256"
    assert me(http, gateway).status_code == 401  # not signed in yet
    callback = at_issuer(http, authorize)
    assert callback.startswith(f"{gateway.url}/api/auth/oidc/callback?")
    done = http.get(callback)
    assert done.status_code == 302, done.text
    assert done.headers["location"] == "/chat/abc?x=1"
    assert "pronghorn_session" in http.cookies
    # the gateway sent the verifier behind the challenge (the fake checked it)
    token = issuer.token_requests[-1]
    assert token.refused is None and s256(token.form["code_verifier"]) == params["code_challenge"]
    user = me(http, gateway).json()["user"]
    assert (user["username"], user["display_name"], user["role"]) == ("ann", "Ann Example", "user")

    again, answer = sign_in(gateway)
    assert answer.status_code == 302 and answer.headers["location"] == "/"
    assert me(again, gateway).json()["user"]["id"] == user["id"]


def test_role_mapping_and_the_audit_log(gateway: LiveServer, issuer: FakeOidcIssuer) -> None:
    issuer.user = IssuerUser(sub="sub-boss", email=ADMIN_EMAIL, preferred_username="boss")
    admin, answer = sign_in(gateway)
    assert answer.status_code == 302
    body = me(admin, gateway).json()
    assert body["user"]["role"] == "admin"
    entries = admin.get(f"{gateway.url}/api/auth/audit").json()
    logins = [e for e in entries if e["action"] == "login" and e["target"] == "boss"]
    assert logins and logins[0]["detail"]["method"] == "oidc"

    # an SSO user the admin disables cannot sign in again
    issuer.user = IssuerUser(sub="sub-carl", email="carl@example.com", preferred_username="carl")
    carl, _ = sign_in(gateway)
    carl_id = me(carl, gateway).json()["user"]["id"]
    patched = admin.patch(
        f"{gateway.url}/api/auth/users/{carl_id}",
        json={"disabled": True},
        headers={"X-CSRF-Token": body["csrf_token"]},
    )
    assert patched.status_code == 200, patched.text
    _, refused = sign_in(gateway)
    assert refused.status_code == 403 and "disabled" in refused.json()["detail"]


def test_a_foreign_domain_is_refused(gateway: LiveServer, issuer: FakeOidcIssuer) -> None:
    issuer.user = IssuerUser(sub="sub-eve", email="eve@evil.com")
    http, answer = sign_in(gateway)
    assert answer.status_code == 403
    assert "evil.com" in answer.json()["detail"]
    assert "pronghorn_session" not in http.cookies and me(http, gateway).status_code == 401
    # a browser gets a small HTML page instead of JSON
    browser = _client(timeout=30, headers={"Accept": "text/html"})
    page = browser.get(at_issuer(browser, start_login(browser, gateway)))
    assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
    assert "evil.com" in page.text and "<script" not in page.text


@pytest.mark.parametrize(
    ("tweak", "said"),
    [
        ("bad_signature", "bad signature"),
        ("expired", "expired"),
        ("wrong_aud", "aud"),
        ("wrong_nonce", "nonce"),
        ("alg_none", "algorithm"),
        ("swap_challenge", "invalid_grant"),  # the issuer's PKCE check failed
    ],
)
def test_bad_tokens_are_refused(
    gateway: LiveServer, issuer: FakeOidcIssuer, tweak: str, said: str
) -> None:
    issuer.tweak = tweak  # type: ignore[assignment]
    http, answer = sign_in(gateway)
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["detail"]
    assert "pronghorn_session" not in http.cookies


def _with_state(url: str, state: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query)) | {"state": state}
    return urlunsplit(parts._replace(query=urlencode(query)))


def test_state_mismatch_and_a_foreign_browser_are_refused(gateway: LiveServer) -> None:
    http = _client(timeout=30)
    callback = at_issuer(http, start_login(http, gateway))
    forged = http.get(_with_state(callback, "forged-state"))
    assert forged.status_code == 400 and "state" in forged.json()["detail"]
    # the code in another browser (no login cookie there): login CSRF refused
    other = _client(timeout=30)
    callback = at_issuer(http, start_login(http, gateway))
    stolen = other.get(callback)
    assert stolen.status_code == 400 and "no login in progress" in stolen.json()["detail"]
    # a repeated state parameter is refused outright
    doubled = http.get(callback + "&state=x")
    assert doubled.status_code == 400


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.com/",
        "//evil.com/x",
        "/\\evil.com",
        "javascript:alert(1)",
        "evil.com",
        "/a\nb",
    ],
)
def test_open_redirects_are_refused(gateway: LiveServer, target: str) -> None:
    answer = httpx.get(f"{gateway.url}/api/auth/oidc/login", params={"next": target})
    assert answer.status_code == 400 and "next" in answer.json()["detail"]


def test_sso_off_is_a_404(server: InProcessServer) -> None:
    with server.http() as http:  # the session server (in process, no auth.oidc)
        answer = http.get("/api/auth/oidc/login")
        assert answer.status_code == 404 and "not configured" in answer.json()["detail"]
        assert http.get("/api/auth/config").json()["oidc"] is None
