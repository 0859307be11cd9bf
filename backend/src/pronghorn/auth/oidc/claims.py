"""From verified claims to the user who signs in: who they are, whether the policy lets
them in (allowed domains and groups) and their role (admin groups and emails)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pronghorn.auth.oidc.errors import OidcError
from pronghorn.auth.oidc.json_views import strings_in
from pronghorn.auth.principal import Role
from pronghorn.config.schema.oidc import OidcConfig

_USERNAME_JUNK = re.compile(r"[^a-z0-9._-]+")
USERNAME_MAX = 64


@dataclass(frozen=True, slots=True)
class OidcIdentity:
    issuer: str
    subject: str
    username: str  # a suggestion: the account is found by (issuer, subject)
    display_name: str
    email: str | None
    email_verified: bool
    groups: tuple[str, ...]
    role: Role


def _text(claims: Mapping[str, object], key: str) -> str | None:
    value = claims.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def groups_of(claims: Mapping[str, object], claim: str) -> tuple[str, ...]:
    return strings_in(claims.get(claim))


def suggested_username(claims: Mapping[str, object], subject: str) -> str:
    """preferred_username, else the email's local part, else one derived from the subject;
    lower case letters, digits, '.', '_' and '-'."""
    email = _text(claims, "email")
    for raw in (_text(claims, "preferred_username"), email.split("@")[0] if email else None):
        if raw:
            name = _USERNAME_JUNK.sub("-", raw.lower()).strip("-.")[:USERNAME_MAX]
            if name:
                return name
    return "sso-" + hashlib.sha256(subject.encode()).hexdigest()[:10]


def identity_from_claims(claims: Mapping[str, object], config: OidcConfig) -> OidcIdentity:
    """The identity behind verified `claims`; OidcError(403) when the policy refuses it."""
    subject = _text(claims, "sub")
    if subject is None:
        raise OidcError("the ID token has no subject")
    email = _text(claims, "email")
    email = email.lower() if email else None
    verified = claims.get("email_verified") is True
    trusted_email = email if (verified or not config.require_verified_email) else None
    groups = groups_of(claims, config.groups_claim)

    if config.allowed_domains:
        if trusted_email is None:
            raise OidcError("sign-in refused: the issuer gave no verified email address", 403)
        domain = trusted_email.rpartition("@")[2]
        if domain not in config.allowed_domains:
            raise OidcError(f"sign-in refused: the email domain {domain!r} is not allowed", 403)
    if config.allowed_groups and not set(groups) & set(config.allowed_groups):
        raise OidcError("sign-in refused: you are in none of the allowed groups", 403)

    is_admin = bool(set(groups) & set(config.admin_groups)) or (
        trusted_email is not None and trusted_email in config.admin_emails
    )
    username = suggested_username(claims, subject)
    return OidcIdentity(
        issuer=config.issuer,
        subject=subject,
        username=username,
        display_name=_text(claims, "name") or username,
        email=email,
        email_verified=verified,
        groups=groups,
        role="admin" if is_admin else "user",
    )
