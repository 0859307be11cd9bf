"""The relying party (`OidcClient`) against the fake issuer over real HTTP: the whole
code + PKCE flow, ID token checks, client authentication, key rotation, policy, roles."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from fakes.oidc_issuer import FakeOidcIssuer, IssuerUser, s256
from pronghorn.auth.oidc.client import OidcClient, OidcError
from pronghorn.auth.oidc.discovery import OidcProvider
from pronghorn.auth.oidc.login_state import LoginState, LoginStateCodec

from .conftest import REDIRECT, authorize, oidc_config, sign_in


async def test_full_flow_yields_the_identity(issuer: FakeOidcIssuer, client: OidcClient) -> None:
    issuer.user = IssuerUser(sub="abc", email="Ann@Example.com", name="Ann", groups=["staff"])
    login = await sign_in(client, "/chat/1")
    identity = login.identity
    assert (identity.issuer, identity.subject) == (issuer.issuer, "abc")
    assert identity.username == "ann" and identity.display_name == "Ann"
    assert identity.email == "ann@example.com" and identity.email_verified
    assert identity.groups == ("staff",) and identity.role == "user"
    assert login.next_path == "/chat/1"


async def test_authorization_request_carries_state_nonce_and_pkce(
    issuer: FakeOidcIssuer, client: OidcClient
) -> None:
    await sign_in(client)
    params = issuer.authorize_requests[-1].params
    assert params["response_type"] == "code" and params["client_id"] == "pronghorn"
    assert params["scope"] == "openid email profile"
    assert params["code_challenge_method"] == "S256"
    assert len(params["state"]) >= 32 and len(params["nonce"]) >= 32
    assert params["redirect_uri"] == REDIRECT
    token = issuer.token_requests[-1]
    assert token.refused is None
    # the verifier sent at the token endpoint is the one behind the challenge
    assert s256(token.form["code_verifier"]) == params["code_challenge"]
    assert token.form["redirect_uri"] == REDIRECT
    # nothing secret travelled in the authorization URL
    assert "s3cret" not in str(params) and token.form["code_verifier"] not in str(params)


async def test_the_fake_refuses_a_wrong_verifier(issuer: FakeOidcIssuer) -> None:
    oidc = OidcClient(oidc_config(issuer))
    try:
        query, _ = await authorize(oidc)
        async with httpx.AsyncClient() as http:
            answer = await http.post(
                f"{issuer.issuer}/token",
                data={
                    "grant_type": "authorization_code",
                    "code": query["code"],
                    "redirect_uri": REDIRECT,
                    "code_verifier": "x" * 64,
                    "client_id": "pronghorn",
                    "client_secret": "s3cret",
                },
            )
        assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    finally:
        await oidc.aclose()


async def test_a_challenge_mismatch_is_refused_by_the_issuer(
    issuer: FakeOidcIssuer, client: OidcClient
) -> None:
    issuer.tweak = "swap_challenge"
    with pytest.raises(OidcError, match="invalid_grant") as caught:
        await sign_in(client)
    assert caught.value.status == 400
    assert issuer.token_requests[-1].refused == "invalid_grant"


@pytest.mark.parametrize(
    ("tweak", "message"),
    [
        ("wrong_aud", "aud"),
        ("expired", "expired"),
        ("future_iat", "future"),
        ("bad_signature", "bad signature"),
        ("wrong_nonce", "nonce"),
        ("wrong_issuer", "iss"),
        ("alg_none", "algorithm 'none'"),
    ],
)
async def test_bad_id_tokens_are_refused(
    issuer: FakeOidcIssuer, client: OidcClient, tweak: str, message: str
) -> None:
    issuer.tweak = tweak  # type: ignore[assignment]
    with pytest.raises(OidcError, match=message) as caught:
        await sign_in(client)
    assert caught.value.status == 400


async def test_es256_tokens_verify(issuer: FakeOidcIssuer, client: OidcClient) -> None:
    issuer.algorithm = "ES256"
    assert (await sign_in(client)).identity.subject == issuer.user.sub
    issuer.tweak = "bad_signature"
    with pytest.raises(OidcError, match="bad signature"):
        await sign_in(client)


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_client_authentication_follows_discovery(method: str) -> None:
    # a secret with characters that client_secret_basic must form-encode
    with FakeOidcIssuer(client_secret="p@ss:w rd/+", auth_methods=(method,)) as issuer:
        oidc = OidcClient(oidc_config(issuer))
        try:
            await sign_in(oidc)
        finally:
            await oidc.aclose()
        assert issuer.token_requests[-1].client_auth == method
        assert ("client_secret" in issuer.token_requests[-1].form) == (method.endswith("post"))


async def test_wrong_client_secret_is_an_issuer_refusal(issuer: FakeOidcIssuer) -> None:
    oidc = OidcClient(oidc_config(issuer, client_secret="wrong"))
    try:
        with pytest.raises(OidcError, match="invalid_client"):
            await sign_in(oidc)
    finally:
        await oidc.aclose()


async def test_keys_are_cached_and_refetched_on_an_unknown_kid(issuer: FakeOidcIssuer) -> None:
    config = oidc_config(issuer)
    http = httpx.AsyncClient()
    oidc = OidcClient(
        config, http=http, provider=OidcProvider(config.issuer, http, refetch_cooldown_s=0)
    )
    try:
        await sign_in(oidc)
        await sign_in(oidc)
        assert (issuer.discovery_fetches, issuer.jwks_fetches) == (1, 1)
        issuer.rotate_keys()
        await sign_in(oidc)
        assert issuer.jwks_fetches == 2
        issuer.tweak = "unknown_kid"
        with pytest.raises(OidcError, match="no RS256 key"):
            await sign_in(oidc)
        assert issuer.jwks_fetches == 3
    finally:
        await oidc.aclose()


async def test_unknown_kids_do_not_hammer_the_issuer(issuer: FakeOidcIssuer) -> None:
    oidc = OidcClient(oidc_config(issuer))  # default cooldown
    try:
        await sign_in(oidc)
        issuer.tweak = "unknown_kid"
        for _ in range(3):
            with pytest.raises(OidcError):
                await sign_in(oidc)
        assert issuer.jwks_fetches == 1
    finally:
        await oidc.aclose()


async def test_state_must_match_the_cookie(issuer: FakeOidcIssuer, client: OidcClient) -> None:
    query, cookie = await authorize(client)
    _, other_cookie = await authorize(client)
    with pytest.raises(OidcError, match="state mismatch"):
        await client.complete(query, other_cookie)
    with pytest.raises(OidcError, match="no login in progress"):
        await client.complete(query, None)
    with pytest.raises(OidcError, match="not valid"):
        await client.complete(query, cookie[:-4] + "AAAA")
    assert (await client.complete(query, cookie)).identity.subject == issuer.user.sub


async def test_a_code_works_once(issuer: FakeOidcIssuer, client: OidcClient) -> None:
    query, cookie = await authorize(client)
    await client.complete(query, cookie)
    with pytest.raises(OidcError, match="invalid_grant"):
        await client.complete(query, cookie)


async def test_issuer_errors_on_the_callback(client: OidcClient) -> None:
    query, cookie = await authorize(client)
    refused = {"state": query["state"], "error": "access_denied", "error_description": "no"}
    with pytest.raises(OidcError, match="access_denied"):
        await client.complete(refused, cookie)


def test_login_state_cookie_expires() -> None:
    codec = LoginStateCodec("secret", lifetime_s=60)
    login = LoginState.new(redirect_uri=REDIRECT, next_path="/")
    sealed = codec.seal(login, now=1_000_000)
    with pytest.raises(OidcError, match="expired"):
        codec.open(sealed, state=login.state)
    fresh = codec.seal(login)
    assert codec.open(fresh, state=login.state) == login
    with pytest.raises(OidcError, match="not valid"):  # another secret: another key
        LoginStateCodec("other").open(fresh, state=login.state)


async def test_discovery_must_name_the_configured_issuer(issuer: FakeOidcIssuer) -> None:
    # the same server under another name: its discovery document names 127.0.0.1
    oidc = OidcClient(oidc_config(issuer, issuer=f"http://localhost:{issuer.port}"))
    try:
        with pytest.raises(OidcError, match="names issuer") as caught:
            await oidc.begin(redirect_uri=REDIRECT, next_path="/")
        assert caught.value.status == 502
    finally:
        await oidc.aclose()


async def test_an_unreachable_issuer_is_a_502(issuer: FakeOidcIssuer) -> None:
    issuer.stop()
    oidc = OidcClient(oidc_config(issuer))
    try:
        with pytest.raises(OidcError, match="unreachable") as caught:
            await oidc.begin(redirect_uri=REDIRECT, next_path="/")
        assert caught.value.status == 502
    finally:
        await oidc.aclose()


async def test_userinfo_fills_groups_the_id_token_lacks(issuer: FakeOidcIssuer) -> None:
    issuer.include_groups_in_id_token = False
    issuer.user = IssuerUser(groups=["admins"])
    oidc = OidcClient(oidc_config(issuer, admin_groups=["admins"]))
    try:
        assert (await sign_in(oidc)).identity.role == "admin"
    finally:
        await oidc.aclose()


def test_authorization_url_keeps_the_endpoints_own_query() -> None:
    from pronghorn.auth.oidc.client import with_query

    url = with_query("https://idp.example/auth?tenant=a b", {"state": "x y", "scope": "a b"})
    assert dict(parse_qsl(urlsplit(url).query)) == {"tenant": "a b", "state": "x y", "scope": "a b"}
