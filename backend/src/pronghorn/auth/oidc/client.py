"""OpenID Connect sign-in (authorization code flow with PKCE S256), as a relying party.

`OidcClient.begin` builds the issuer's authorization URL and the sealed login state the
browser keeps in a cookie; `OidcClient.complete` takes the callback's query and that
cookie, redeems the code at the token endpoint, verifies the ID token and returns the
`OidcIdentity` to sign in (accounts and sessions are the caller's business).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx

from pronghorn.auth.oidc.claims import OidcIdentity, identity_from_claims
from pronghorn.auth.oidc.discovery import OidcProvider, ProviderMetadata
from pronghorn.auth.oidc.errors import OidcError
from pronghorn.auth.oidc.json_views import as_object
from pronghorn.auth.oidc.login_state import LoginState, LoginStateCodec, pkce_challenge
from pronghorn.auth.oidc.tokens import Claims, allowed_algorithms, token_header, verify_id_token
from pronghorn.config.schema.oidc import OidcConfig

__all__ = ["LoginStart", "OidcClient", "OidcError", "OidcIdentity", "OidcLogin"]

HTTP_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class LoginStart:
    authorization_url: str
    state_cookie: str  # the sealed LoginState, for an HttpOnly cookie


@dataclass(frozen=True, slots=True)
class OidcLogin:
    identity: OidcIdentity
    next_path: str


def with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def basic_credentials(client_id: str, secret: str) -> str:
    """client_secret_basic: both parts form-urlencoded first (RFC 6749, 2.3.1)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


class OidcClient:
    """One configured issuer; owns its HTTP client (close with `aclose`)."""

    def __init__(
        self,
        config: OidcConfig,
        *,
        http: httpx.AsyncClient | None = None,
        provider: OidcProvider | None = None,
    ) -> None:
        self.config = config
        self.http = http or httpx.AsyncClient(timeout=HTTP_TIMEOUT_S, follow_redirects=False)
        self.provider = provider or OidcProvider(config.issuer, self.http)
        self.codec = LoginStateCodec(config.client_secret.get_secret_value())

    async def aclose(self) -> None:
        await self.http.aclose()

    async def begin(self, *, redirect_uri: str, next_path: str) -> LoginStart:
        metadata = await self.provider.metadata()
        if metadata.code_challenge_methods and "S256" not in metadata.code_challenge_methods:
            raise OidcError("the issuer does not support PKCE with S256", 502)
        login = LoginState.new(redirect_uri=redirect_uri, next_path=next_path)
        url = with_query(
            metadata.authorization_endpoint,
            {
                "response_type": "code",
                "client_id": self.config.client_id,
                "redirect_uri": redirect_uri,
                "scope": " ".join(self.config.scopes),
                "state": login.state,
                "nonce": login.nonce,
                "code_challenge": pkce_challenge(login.code_verifier),
                "code_challenge_method": "S256",
            },
        )
        return LoginStart(url, self.codec.seal(login))

    async def complete(self, query: Mapping[str, str], state_cookie: str | None) -> OidcLogin:
        state = query.get("state")
        if not state:
            raise OidcError("the callback has no state")
        login = self.codec.open(state_cookie, state=state)
        if error := query.get("error"):
            described = query.get("error_description")
            extra = f" ({described})" if described else ""
            raise OidcError(f"the issuer refused: {error}{extra}")
        code = query.get("code")
        if not code:
            raise OidcError("the callback has no code")
        metadata = await self.provider.metadata()
        tokens = await self._redeem(metadata, code, login)
        id_token = tokens.get("id_token")
        if not isinstance(id_token, str):
            raise OidcError("the issuer's token response has no id_token", 502)
        claims = await self._verify(metadata, id_token, login.nonce)
        access_token = tokens.get("access_token")
        if isinstance(access_token, str) and self._wants_userinfo(claims, metadata):
            claims = await self._add_userinfo(metadata, access_token, claims)
        return OidcLogin(identity_from_claims(claims, self.config), login.next_path)

    async def _redeem(
        self, metadata: ProviderMetadata, code: str, login: LoginState
    ) -> dict[str, object]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": login.redirect_uri,
            "code_verifier": login.code_verifier,
        }
        headers = {"Accept": "application/json"}
        secret = self.config.client_secret.get_secret_value()
        if "client_secret_basic" in metadata.token_auth_methods:
            headers["Authorization"] = basic_credentials(self.config.client_id, secret)
        elif "client_secret_post" in metadata.token_auth_methods:
            form |= {"client_id": self.config.client_id, "client_secret": secret}
        else:
            raise OidcError("the issuer supports neither client_secret_basic nor _post", 502)
        try:
            response = await self.http.post(metadata.token_endpoint, data=form, headers=headers)
        except httpx.HTTPError as exc:
            what = type(exc).__name__
            raise OidcError(f"the token endpoint is unreachable: {what}", 502) from None
        try:
            body: object = json.loads(response.content)
        except ValueError:
            body = None
        data = as_object(body) or {}
        if response.status_code == 200 and data:
            return data
        if 400 <= response.status_code < 500 and isinstance(data.get("error"), str):
            described = data.get("error_description")
            extra = f" ({described})" if isinstance(described, str) else ""
            raise OidcError(f"the issuer refused the code: {data['error']}{extra}")
        raise OidcError(f"the token endpoint answered HTTP {response.status_code}", 502)

    async def _verify(self, metadata: ProviderMetadata, id_token: str, nonce: str) -> Claims:
        _, kid = token_header(id_token)
        keys = await self.provider.signing_keys(kid)
        return verify_id_token(
            id_token,
            keys=keys,
            issuer=metadata.issuer,
            client_id=self.config.client_id,
            nonce=nonce,
            algorithms=allowed_algorithms(metadata.signing_algorithms),
        )

    def _wants_userinfo(self, claims: Claims, metadata: ProviderMetadata) -> bool:
        needs_groups = bool(self.config.allowed_groups or self.config.admin_groups)
        missing = "email" not in claims or (needs_groups and self.config.groups_claim not in claims)
        return missing and metadata.userinfo_endpoint is not None

    async def _add_userinfo(
        self, metadata: ProviderMetadata, access_token: str, claims: Claims
    ) -> Claims:
        """Claims the ID token lacks, from the userinfo endpoint (the ID token wins; the
        subject must match, OpenID Connect Core 1.0, 5.3.2)."""
        assert metadata.userinfo_endpoint is not None
        headers = {"Authorization": f"Bearer {access_token}", "Accept": "application/json"}
        try:
            response = await self.http.get(metadata.userinfo_endpoint, headers=headers)
        except httpx.HTTPError:
            return claims  # userinfo is a bonus: sign in with what the ID token says
        try:
            info: object = json.loads(response.content) if response.status_code == 200 else None
        except ValueError:
            info = None
        extra = as_object(info)
        if extra is None or extra.get("sub") != claims.get("sub"):
            return claims
        return {**extra, **claims}
