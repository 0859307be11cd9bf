"""A small but real OpenID Connect issuer over HTTP, for tests.

It runs a Starlette app under uvicorn in a background thread on a free 127.0.0.1 port and
speaks the protocol a relying party needs: discovery, a JWKS (an RSA key generated at
start, plus an EC P-256 key for ES256), `/authorize` (auto-approves `issuer.user`,
redirects back with a one-time code and the state; records the PKCE challenge), `/token`
(checks client authentication, the code, the redirect_uri and the S256 code_verifier;
returns a signed ID token carrying the nonce, and an access token) and `/userinfo`.

    with FakeOidcIssuer(client_id="pronghorn", client_secret="s3cret") as issuer:
        issuer.user = IssuerUser(sub="u1", email="ann@example.com", groups=["staff"])
        issuer.tweak = "expired"   # make the next ID token misbehave
        assert issuer.token_requests[-1].form["code_verifier"] ...

Tweaks (each applies to ID tokens until reset to None): "wrong_aud", "expired",
"future_iat", "bad_signature", "wrong_nonce", "wrong_issuer", "unknown_kid",
"alg_none", and "swap_challenge" (record a challenge the client's verifier cannot match).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Literal

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from support.threaded_server import ThreadedServer

Tweak = Literal[
    "wrong_aud",
    "expired",
    "future_iat",
    "bad_signature",
    "wrong_nonce",
    "wrong_issuer",
    "unknown_kid",
    "alg_none",
    "swap_challenge",
]


@dataclass
class IssuerUser:
    sub: str = "user-1"
    email: str | None = "ann@example.com"
    email_verified: bool = True
    name: str | None = "Ann Example"
    preferred_username: str | None = "ann"
    groups: list[str] = field(default_factory=list)

    def claims(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sub": self.sub, "groups": list(self.groups)}
        if self.email is not None:
            out |= {"email": self.email, "email_verified": self.email_verified}
        if self.name is not None:
            out["name"] = self.name
        if self.preferred_username is not None:
            out["preferred_username"] = self.preferred_username
        return out


@dataclass
class AuthorizeRequest:
    params: dict[str, str]


@dataclass
class TokenRequest:
    form: dict[str, str]
    headers: dict[str, str]
    client_auth: str | None  # "client_secret_basic" | "client_secret_post" | None
    refused: str | None = None  # the OAuth error the fake answered, if it refused


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    nonce: str | None
    user: IssuerUser


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def s256(verifier: str) -> str:
    return _b64(hashlib.sha256(verifier.encode("ascii")).digest())


class FakeOidcIssuer:
    def __init__(
        self,
        *,
        client_id: str = "pronghorn",
        client_secret: str = "s3cret",
        auth_methods: tuple[str, ...] = ("client_secret_basic", "client_secret_post"),
        algorithm: Literal["RS256", "ES256"] = "RS256",
        user: IssuerUser | None = None,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_methods = auth_methods
        self.algorithm = algorithm
        self.user = user or IssuerUser()
        self.tweak: Tweak | None = None
        self.include_groups_in_id_token = True
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        self.rsa_kid = "rsa-" + secrets.token_hex(4)
        self.ec_kid = "ec-" + secrets.token_hex(4)
        self.authorize_requests: list[AuthorizeRequest] = []
        self.token_requests: list[TokenRequest] = []
        self.jwks_fetches = 0
        self.discovery_fetches = 0
        self._grants: dict[str, _Grant] = {}
        self._access_tokens: dict[str, IssuerUser] = {}
        self._lock = threading.Lock()
        self.port = 0
        self._http: ThreadedServer | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rotate_keys(self) -> None:
        """New keys with new ids (a relying party must refetch the JWKS to verify)."""
        with self._lock:
            self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.ec_key = ec.generate_private_key(ec.SECP256R1())
            self.rsa_kid = "rsa-" + secrets.token_hex(4)
            self.ec_kid = "ec-" + secrets.token_hex(4)

    # -- protocol ----------------------------------------------------------------------
    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            "token_endpoint_auth_methods_supported": list(self.auth_methods),
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile", "groups"],
        }

    def jwks(self) -> dict[str, Any]:
        rsa_jwk = json.loads(RSAAlgorithm.to_jwk(self.rsa_key.public_key()))
        ec_jwk = json.loads(ECAlgorithm.to_jwk(self.ec_key.public_key()))
        rsa_jwk |= {"kid": self.rsa_kid, "use": "sig", "alg": "RS256"}
        ec_jwk |= {"kid": self.ec_kid, "use": "sig", "alg": "ES256"}
        return {"keys": [rsa_jwk, ec_jwk]}

    def sign_id_token(self, claims: dict[str, Any], tweak: Tweak | None = None) -> str:
        """An ID token for `claims` as this issuer signs it (tests may call it directly)."""
        now = int(time.time())
        body = {"iss": self.issuer, "aud": self.client_id, "iat": now, "exp": now + 300}
        body |= claims
        if tweak == "wrong_aud":
            body["aud"] = "someone-else"
        elif tweak == "expired":
            body |= {"iat": now - 3600, "exp": now - 1800}
        elif tweak == "future_iat":
            body |= {"iat": now + 3600, "exp": now + 7200}
        elif tweak == "wrong_nonce":
            body["nonce"] = "not-the-nonce"
        elif tweak == "wrong_issuer":
            body["iss"] = "http://127.0.0.1:1/evil"
        if tweak == "alg_none":
            return jwt.encode(body, "", algorithm="none")  # "": no key (PyJWT reads it as None)
        if self.algorithm == "RS256":
            key: Any = self.rsa_key
            kid = self.rsa_kid
        else:
            key, kid = self.ec_key, self.ec_kid
        if tweak == "unknown_kid":
            kid = "never-published"
        if tweak == "bad_signature":  # signed by a key the JWKS does not hold
            key = (
                rsa.generate_private_key(public_exponent=65537, key_size=2048)
                if self.algorithm == "RS256"
                else ec.generate_private_key(ec.SECP256R1())
            )
        return jwt.encode(body, key, algorithm=self.algorithm, headers={"kid": kid})

    async def _discovery(self, request: Request) -> Response:
        self.discovery_fetches += 1
        return JSONResponse(self.discovery())

    async def _jwks(self, request: Request) -> Response:
        self.jwks_fetches += 1
        return JSONResponse(self.jwks())

    async def _authorize(self, request: Request) -> Response:
        params = dict(request.query_params)
        self.authorize_requests.append(AuthorizeRequest(params))
        redirect_uri = params.get("redirect_uri", "")
        if params.get("client_id") != self.client_id or not redirect_uri.startswith("http"):
            return PlainTextResponse("unknown client or redirect_uri", status_code=400)

        def back(**values: str) -> Response:
            if "state" in params:
                values["state"] = params["state"]
            sep = "&" if "?" in redirect_uri else "?"
            return RedirectResponse(redirect_uri + sep + urllib.parse.urlencode(values), 302)

        if params.get("response_type") != "code" or "openid" not in params.get("scope", ""):
            return back(error="invalid_request", error_description="code flow with openid only")
        challenge = params.get("code_challenge")
        if not challenge or params.get("code_challenge_method") != "S256":
            return back(error="invalid_request", error_description="PKCE S256 is required")
        if self.tweak == "swap_challenge":
            challenge = s256("a verifier the client does not know")
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._grants[code] = _Grant(
                self.client_id, redirect_uri, challenge, params.get("nonce"), self.user
            )
        return back(code=code)

    def _client_auth(self, request: Request, form: dict[str, str]) -> str | None:
        header = request.headers.get("authorization", "")
        if header.startswith("Basic ") and "client_secret_basic" in self.auth_methods:
            try:
                raw = base64.b64decode(header[6:]).decode()
            except ValueError:
                return None
            cid, _, secret = raw.partition(":")
            pair = (urllib.parse.unquote_plus(cid), urllib.parse.unquote_plus(secret))
            return "client_secret_basic" if pair == (self.client_id, self.client_secret) else None
        if "client_secret" in form and "client_secret_post" in self.auth_methods:
            pair = (form.get("client_id"), form.get("client_secret"))
            return "client_secret_post" if pair == (self.client_id, self.client_secret) else None
        return None

    async def _token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        method = self._client_auth(request, form)
        record = TokenRequest(form, dict(request.headers), method)
        self.token_requests.append(record)

        def refuse(error: str, description: str, status: int = 400) -> Response:
            record.refused = error
            body = {"error": error, "error_description": description}
            return JSONResponse(body, status_code=status)

        if method is None:
            return refuse("invalid_client", "client authentication failed", 401)
        if form.get("grant_type") != "authorization_code":
            return refuse("unsupported_grant_type", "authorization_code only")
        with self._lock:
            grant = self._grants.pop(form.get("code", ""), None)  # one use only
        if grant is None:
            return refuse("invalid_grant", "unknown or used code")
        if form.get("redirect_uri") != grant.redirect_uri:
            return refuse("invalid_grant", "redirect_uri differs from the authorization's")
        verifier = form.get("code_verifier", "")
        if not verifier or s256(verifier) != grant.challenge:
            return refuse("invalid_grant", "PKCE verification failed")
        claims = grant.user.claims()
        if not self.include_groups_in_id_token:
            claims.pop("groups", None)
        if grant.nonce is not None:
            claims["nonce"] = grant.nonce
        access = secrets.token_urlsafe(24)
        with self._lock:
            self._access_tokens[access] = grant.user
        return JSONResponse(
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": 300,
                "id_token": self.sign_id_token(claims, self.tweak),
            },
            headers={"Cache-Control": "no-store"},
        )

    async def _userinfo(self, request: Request) -> Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        with self._lock:
            user = self._access_tokens.get(token)
        if user is None:
            return JSONResponse({"error": "invalid_token"}, status_code=401)
        return JSONResponse(user.claims())

    # -- lifecycle ---------------------------------------------------------------------
    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self._discovery),
                Route("/jwks", self._jwks),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
                Route("/userinfo", self._userinfo),
            ]
        )

    def start(self) -> FakeOidcIssuer:
        self._http = ThreadedServer(self._app(), lifespan="off", name="fake OIDC issuer").start()
        self.port = self._http.port
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.stop()

    def __enter__(self) -> FakeOidcIssuer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
