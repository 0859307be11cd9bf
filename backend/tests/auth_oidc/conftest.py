"""A fake OIDC issuer per test, and an `OidcClient` configured for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from fakes.oidc_issuer import FakeOidcIssuer
from pronghorn.auth.oidc.client import OidcClient, OidcLogin
from pronghorn.config.schema.oidc import OidcConfig

REDIRECT = "http://localhost:2026/api/auth/oidc/callback"


@pytest.fixture
def issuer() -> Iterator[FakeOidcIssuer]:
    with FakeOidcIssuer(client_id="pronghorn", client_secret="s3cret") as fake:
        yield fake


def oidc_config(fake: FakeOidcIssuer, **overrides: Any) -> OidcConfig:
    values: dict[str, Any] = {
        "issuer": fake.issuer,
        "client_id": fake.client_id,
        "client_secret": fake.client_secret,
    }
    return OidcConfig.model_validate(values | overrides)


@pytest.fixture
async def client(issuer: FakeOidcIssuer) -> AsyncIterator[OidcClient]:
    oidc = OidcClient(oidc_config(issuer))
    yield oidc
    await oidc.aclose()


async def authorize(oidc: OidcClient, next_path: str = "/") -> tuple[dict[str, str], str]:
    """Run `begin` and the issuer's /authorize: (the callback's query, the state cookie)."""
    start = await oidc.begin(redirect_uri=REDIRECT, next_path=next_path)
    async with httpx.AsyncClient() as http:
        answer = await http.get(start.authorization_url)
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT)
    return dict(parse_qsl(urlsplit(location).query)), start.state_cookie


async def sign_in(oidc: OidcClient, next_path: str = "/") -> OidcLogin:
    query, cookie = await authorize(oidc, next_path)
    return await oidc.complete(query, cookie)
