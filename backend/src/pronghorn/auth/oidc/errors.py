"""The one error of the OpenID Connect login (the gateway maps it to its status)."""

from __future__ import annotations


class OidcError(Exception):
    """A login that cannot complete: `status` is 400 (a bad or forged request, a refused
    token), 403 (a valid user the policy refuses) or 502 (the issuer failed us)."""

    def __init__(self, detail: str, status: int = 400) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
