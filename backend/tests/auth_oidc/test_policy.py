"""Claims to identity: allowed domains and groups, role mapping, usernames; and the
`auth.oidc` config rules."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from pronghorn.auth.oidc.claims import identity_from_claims, suggested_username
from pronghorn.auth.oidc.client import OidcError
from pronghorn.config.schema.app import AppConfig
from pronghorn.config.schema.oidc import OidcConfig

BASE = {"issuer": "https://idp.example.com", "client_id": "c", "client_secret": "s"}


def config(**overrides: Any) -> OidcConfig:
    return OidcConfig.model_validate(BASE | overrides)


def claims(**overrides: object) -> dict[str, object]:
    return {"sub": "s1", "email": "ann@example.com", "email_verified": True} | overrides


def test_allowed_domains_need_a_verified_email_of_the_domain() -> None:
    cfg = config(allowed_domains=["Example.com"])
    assert identity_from_claims(claims(), cfg).email == "ann@example.com"
    for refused in (
        claims(email="ann@evil.com"),
        claims(email_verified=False),
        claims(email_verified="true"),  # only a real boolean counts
        {"sub": "s1"},
    ):
        with pytest.raises(OidcError) as caught:
            identity_from_claims(refused, cfg)
        assert caught.value.status == 403
    relaxed = config(allowed_domains=["example.com"], require_verified_email=False)
    assert identity_from_claims(claims(email_verified=False), relaxed).subject == "s1"


def test_allowed_groups_and_both_lists() -> None:
    cfg = config(allowed_groups=["staff"])
    assert identity_from_claims(claims(groups=["x", "staff"]), cfg).groups == ("x", "staff")
    with pytest.raises(OidcError, match="groups"):
        identity_from_claims(claims(groups=["x"]), cfg)
    both = config(allowed_groups=["staff"], allowed_domains=["example.com"])
    with pytest.raises(OidcError, match="domain"):
        identity_from_claims(claims(email="a@other.org", groups=["staff"]), both)
    custom = config(allowed_groups=["staff"], groups_claim="roles")
    assert identity_from_claims(claims(roles="staff"), custom).groups == ("staff",)


def test_role_mapping() -> None:
    cfg = config(admin_groups=["ops"], admin_emails=["Boss@Example.com"])
    assert identity_from_claims(claims(groups=["ops"]), cfg).role == "admin"
    assert identity_from_claims(claims(email="boss@example.com"), cfg).role == "admin"
    assert identity_from_claims(claims(), cfg).role == "user"
    # an unverified email never makes an admin
    unverified = claims(email="boss@example.com", email_verified=False)
    assert identity_from_claims(unverified, cfg).role == "user"


def test_usernames() -> None:
    assert suggested_username({"preferred_username": "Ann Smith!"}, "s") == "ann-smith"
    assert suggested_username({"email": "bob.b@x.io"}, "s") == "bob.b"
    generated = suggested_username({"preferred_username": "!!!"}, "sub-1")
    assert generated.startswith("sso-") and generated == suggested_username({}, "sub-1")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"issuer": "http://idp.example.com"}, "https"),
        ({"issuer": "ftp://idp.example.com"}, "http"),
        ({"issuer": "https://idp.example.com?x=1"}, "query"),
        ({"scopes": ["email"]}, "openid"),
        ({"allowed_domains": ["@"]}, "domains"),
        ({"admin_emails": ["nobody"]}, "email"),
        ({"client_secret": None}, "client_secret"),
    ],
)
def test_config_refuses(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        config(**overrides)


def test_loopback_http_issuers_are_allowed() -> None:
    for url in ("http://127.0.0.1:9000", "http://localhost:8080/realm", "http://[::1]:1"):
        assert config(issuer=url).issuer == url


def test_oidc_needs_local_mode() -> None:
    oidc = BASE
    with pytest.raises(ValidationError, match=r"auth\.mode: local"):
        AppConfig.model_validate({"auth": {"mode": "none", "oidc": oidc}})
    app = AppConfig.model_validate({"auth": {"mode": "local", "oidc": oidc}})
    assert app.auth.oidc is not None and app.auth.oidc.label == "Sign in with SSO"
    assert AppConfig().auth.oidc is None
