"""`auth.oidc`: single sign-on with an OpenID Connect issuer (authorization code + PKCE)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

DEFAULT_SCOPES = ("openid", "email", "profile")


def is_loopback_host(host: str) -> bool:
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_endpoint_url(value: str) -> str:
    """An issuer's endpoint must be https, or http on a loopback host (local test
    issuers), with no fragment."""
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{value!r} is not an http(s) URL")
    if parts.scheme == "http" and not is_loopback_host(parts.hostname):
        raise ValueError(f"{value!r} must use https (plain http is allowed on loopback only)")
    if parts.fragment:
        raise ValueError(f"{value!r} must not have a fragment")
    return value


def check_issuer_url(value: str) -> str:
    """An issuer URL: an endpoint URL without a query (OpenID Connect Discovery 1.0, 2)."""
    check_endpoint_url(value)
    if urlsplit(value).query:
        raise ValueError(f"{value!r} must not have a query")
    return value


class OidcConfig(BaseModel):
    """Single sign-on with an OpenID Connect issuer (needs auth.mode: local)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    issuer: str = Field(
        description=(
            "The issuer URL, exactly as its discovery document names it "
            "(<issuer>/.well-known/openid-configuration); https, or http on loopback only."
        )
    )
    client_id: str = Field(min_length=1, description="The client id registered at the issuer.")
    client_secret: SecretStr = Field(
        description=(
            "The client secret (use ${VAR}); it also keys the signature of the short-lived "
            "login-state cookie."
        )
    )
    scopes: list[str] = Field(
        default_factory=lambda: list(DEFAULT_SCOPES),
        description="Scopes requested; must include openid.",
    )
    redirect_url: str | None = Field(
        default=None,
        description=(
            "The callback URL registered at the issuer; default: "
            "<the request's origin>/api/auth/oidc/callback."
        ),
    )
    allowed_domains: list[str] = Field(
        default_factory=list,
        description=(
            "Email domains allowed to sign in (the email must be verified, see "
            "require_verified_email); empty: any."
        ),
    )
    allowed_groups: list[str] = Field(
        default_factory=list,
        description=(
            "Groups (from groups_claim) allowed to sign in; empty: any. With both lists set "
            "a user must pass both."
        ),
    )
    groups_claim: str = Field(
        default="groups", min_length=1, description="The claim listing groups."
    )
    admin_groups: list[str] = Field(
        default_factory=list, description="Members of these groups sign in as admin."
    )
    admin_emails: list[str] = Field(
        default_factory=list, description="These (verified) emails sign in as admin."
    )
    require_verified_email: bool = Field(
        default=True,
        description=(
            "Trust an email (for allowed_domains and admin_emails) only when the issuer "
            "says email_verified: true."
        ),
    )
    label: str = Field(
        default="Sign in with SSO",
        min_length=1,
        max_length=80,
        description="The login button's text.",
    )

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        return check_issuer_url(value)

    @field_validator("redirect_url")
    @classmethod
    def _redirect(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.hostname or parts.fragment:
            raise ValueError(f"{value!r} is not an absolute http(s) URL without a fragment")
        return value

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, value: list[str]) -> list[str]:
        if "openid" not in value:
            raise ValueError("scopes must include 'openid'")
        bad = [s for s in value if not s or any(c.isspace() for c in s)]
        if bad:
            raise ValueError(f"invalid scopes {bad}")
        return value

    @field_validator("allowed_domains")
    @classmethod
    def _domains(cls, value: list[str]) -> list[str]:
        out = [d.strip().lower().lstrip("@") for d in value]
        if any(not d or "@" in d for d in out):
            raise ValueError("allowed_domains holds domains like 'example.com'")
        return out

    @field_validator("admin_emails")
    @classmethod
    def _emails(cls, value: list[str]) -> list[str]:
        out = [e.strip().lower() for e in value]
        if any(e.count("@") != 1 for e in out):
            raise ValueError("admin_emails holds email addresses")
        return out
