"""The issuer's metadata (OpenID Connect Discovery) and signing keys (JWKS), fetched over
async httpx and cached; the key set is fetched again when a token names an unknown key."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from pronghorn.auth.oidc.errors import OidcError
from pronghorn.auth.oidc.json_views import as_list, as_object, strings_in
from pronghorn.config.schema.oidc import check_endpoint_url

if TYPE_CHECKING:
    import jwt

log = logging.getLogger("pronghorn.auth.oidc")

MAX_DOCUMENT_BYTES = 512 * 1024
# The signature algorithms we verify (never "none" or a shared-secret HS*).
SUPPORTED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")


@dataclass(frozen=True, slots=True)
class ProviderMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None
    token_auth_methods: tuple[str, ...]
    signing_algorithms: tuple[str, ...]
    code_challenge_methods: tuple[str, ...]

    @classmethod
    def parse(cls, doc: Mapping[str, object], *, expected_issuer: str) -> ProviderMetadata:
        if doc.get("issuer") != expected_issuer:
            raise OidcError(
                f"the discovery document names issuer {doc.get('issuer')!r}, "
                f"not the configured {expected_issuer!r}",
                502,
            )

        def endpoint(key: str, required: bool = True) -> str | None:
            value = doc.get(key)
            if value is None and not required:
                return None
            if not isinstance(value, str):
                raise OidcError(f"the discovery document has no {key}", 502)
            try:
                return check_endpoint_url(value)
            except ValueError as exc:
                raise OidcError(f"the discovery document's {key}: {exc}", 502) from None

        def strings(key: str, default: Sequence[str]) -> tuple[str, ...]:
            value: object = doc.get(key)
            return tuple(default) if as_list(value) is None else strings_in(value)

        authorization = endpoint("authorization_endpoint")
        token = endpoint("token_endpoint")
        jwks = endpoint("jwks_uri")
        assert authorization is not None and token is not None and jwks is not None
        return cls(
            issuer=expected_issuer,
            authorization_endpoint=authorization,
            token_endpoint=token,
            jwks_uri=jwks,
            userinfo_endpoint=endpoint("userinfo_endpoint", required=False),
            # Discovery's defaults when a list is absent (OpenID Connect Discovery 1.0, 3).
            token_auth_methods=strings(
                "token_endpoint_auth_methods_supported", ("client_secret_basic",)
            ),
            signing_algorithms=strings("id_token_signing_alg_values_supported", ("RS256",)),
            code_challenge_methods=strings("code_challenge_methods_supported", ()),
        )


async def fetch_json(http: httpx.AsyncClient, url: str, what: str) -> dict[str, object]:
    """GET `url` as a JSON object, at most MAX_DOCUMENT_BYTES; OidcError(502) otherwise."""
    try:
        async with http.stream("GET", url, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise OidcError(f"the issuer's {what} answered HTTP {response.status_code}", 502)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise OidcError(f"the issuer's {what} is too large", 502)
    except httpx.HTTPError as exc:
        raise OidcError(f"the issuer's {what} is unreachable: {type(exc).__name__}", 502) from None
    try:
        data: object = json.loads(bytes(body))
    except ValueError:
        raise OidcError(f"the issuer's {what} is not JSON", 502) from None
    found = as_object(data)
    if found is None:
        raise OidcError(f"the issuer's {what} is not a JSON object", 502)
    return found


@dataclass(frozen=True, slots=True)
class SigningKey:
    kid: str | None
    kty: str
    alg: str | None  # as the JWK declares it, if it does
    crv: str | None
    key: jwt.PyJWK


def parse_jwks(doc: Mapping[str, object]) -> tuple[SigningKey, ...]:
    """The usable signature keys of a JWK set; keys we cannot use are skipped."""
    import jwt  # PyJWT: loaded on the first OIDC login, not at every start

    raw = as_list(doc.get("keys"))
    if raw is None:
        raise OidcError("the issuer's JWKS has no keys list", 502)
    keys: list[SigningKey] = []
    for entry in raw:
        item = as_object(entry)
        if item is None or item.get("use", "sig") != "sig":
            continue
        try:
            parsed = jwt.PyJWK(item)
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue  # an unsupported key type or curve
        kid, alg, crv = (item.get(k) for k in ("kid", "alg", "crv"))
        keys.append(
            SigningKey(
                kid=kid if isinstance(kid, str) else None,
                kty=parsed.key_type or "",
                alg=alg if isinstance(alg, str) else None,
                crv=crv if isinstance(crv, str) else None,
                key=parsed,
            )
        )
    return tuple(keys)


class OidcProvider:
    """One issuer's metadata and keys, cached for `ttl_s`. A token naming a key id not in
    the cached set triggers one refetch (at most every `refetch_cooldown_s`), so key
    rotation works without a restart and a flood of bad tokens cannot hammer the issuer."""

    def __init__(
        self,
        issuer: str,
        http: httpx.AsyncClient,
        *,
        ttl_s: float = 3600.0,
        refetch_cooldown_s: float = 10.0,
    ) -> None:
        self.issuer = issuer
        self.http = http
        self.ttl_s = ttl_s
        self.refetch_cooldown_s = refetch_cooldown_s
        self._metadata: ProviderMetadata | None = None
        self._metadata_at = 0.0
        self._keys: tuple[SigningKey, ...] = ()
        self._keys_at = float("-inf")
        self._lock = asyncio.Lock()

    @property
    def discovery_url(self) -> str:
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"

    async def metadata(self) -> ProviderMetadata:
        async with self._lock:
            if self._metadata is None or time.monotonic() - self._metadata_at > self.ttl_s:
                doc = await fetch_json(self.http, self.discovery_url, "discovery document")
                self._metadata = ProviderMetadata.parse(doc, expected_issuer=self.issuer)
                self._metadata_at = time.monotonic()
            return self._metadata

    async def signing_keys(self, kid: str | None) -> tuple[SigningKey, ...]:
        """The cached keys; fetched again when stale or when `kid` is not among them."""
        metadata = await self.metadata()
        async with self._lock:
            age = time.monotonic() - self._keys_at
            known = any(k.kid == kid for k in self._keys) if kid else bool(self._keys)
            if age > self.ttl_s or (not known and age >= self.refetch_cooldown_s):
                doc = await fetch_json(self.http, metadata.jwks_uri, "JWKS")
                self._keys = parse_jwks(doc)
                self._keys_at = time.monotonic()
                log.info("oidc signing keys fetched", extra={"keys": len(self._keys)})
            return self._keys
