"""What a login keeps between `/login` and `/callback`: state, nonce, the PKCE verifier,
the redirect URI and where to go next, in a signed, short-lived HttpOnly cookie.

The cookie is an HS256 JWT keyed by a key derived from the client secret (so every replica
sharing the config can read it and nobody else can forge it); the browser that started the
login is the only one holding it, which binds the callback to that browser (login CSRF).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from pronghorn.auth.oidc.errors import OidcError

COOKIE_NAME = "pronghorn_oidc_login"
COOKIE_PATH = "/api/auth/oidc/"
LIFETIME_S = 600
_AUDIENCE = "pronghorn-oidc-login"
_KEY_LABEL = b"pronghorn oidc login state v1"


def random_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a PKCE verifier (RFC 7636, 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class LoginState:
    state: str
    nonce: str
    code_verifier: str
    redirect_uri: str
    next_path: str

    @classmethod
    def new(cls, *, redirect_uri: str, next_path: str) -> LoginState:
        # 64 random bytes -> an 86-character verifier (RFC 7636 allows 43 to 128).
        return cls(random_token(), random_token(), random_token(64), redirect_uri, next_path)


class LoginStateCodec:
    """Seals a `LoginState` into a cookie value and opens it again."""

    def __init__(self, secret: str, *, lifetime_s: int = LIFETIME_S) -> None:
        self._key = hmac.new(secret.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest()
        self.lifetime_s = lifetime_s

    def seal(self, login: LoginState, *, now: float | None = None) -> str:
        import jwt  # PyJWT: loaded on the first OIDC login, not at every start

        issued = int(time.time() if now is None else now)
        claims = {
            "aud": _AUDIENCE,
            "iat": issued,
            "exp": issued + self.lifetime_s,
            "st": login.state,
            "nn": login.nonce,
            "cv": login.code_verifier,
            "ru": login.redirect_uri,
            "nx": login.next_path,
        }
        return jwt.encode(claims, self._key, algorithm="HS256")

    def open(self, value: str | None, *, state: str) -> LoginState:
        """The login `value` holds, if it is ours, unexpired and for this `state`."""
        if not value:
            raise OidcError("no login in progress in this browser (or it expired): start again")
        import jwt  # PyJWT: loaded on the first OIDC login, not at every start

        try:
            claims = jwt.decode(
                value,
                self._key,
                algorithms=["HS256"],
                audience=_AUDIENCE,
                options={"require": ["exp", "iat", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise OidcError("the login took too long and expired: start again") from None
        except jwt.PyJWTError:
            raise OidcError("the login cookie is not valid: start again") from None
        fields = [claims.get(k) for k in ("st", "nn", "cv", "ru", "nx")]
        if not all(isinstance(f, str) and f for f in fields):
            raise OidcError("the login cookie is not valid: start again")
        login = LoginState(*(str(f) for f in fields))
        if not hmac.compare_digest(login.state.encode(), state.encode()):
            raise OidcError("state mismatch: this callback is not for this browser's login")
        return login
