"""What the authenticator and the auth endpoints share: limits, proxies, session lifetime."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pronghorn.auth.proxies import TrustedProxies
from pronghorn.auth.ratelimit import AuthLimits, Clock
from pronghorn.config.schema.app import AuthConfig, ServerConfig


@dataclass(frozen=True)
class AuthServices:
    mode: str
    proxies: TrustedProxies
    limits: AuthLimits
    session_ttl: timedelta
    # Origins besides the server's own that may send cookie-authenticated writes.
    trusted_origins: frozenset[str]

    @classmethod
    def from_config(
        cls, auth: AuthConfig, server: ServerConfig, *, clock: Clock | None = None
    ) -> AuthServices:
        limits = (
            AuthLimits(
                per_ip=auth.max_failures_per_ip,
                per_account=auth.max_failures_per_account,
                window_s=auth.failure_window_s,
                clock=clock,
            )
            if clock is not None
            else AuthLimits(
                per_ip=auth.max_failures_per_ip,
                per_account=auth.max_failures_per_account,
                window_s=auth.failure_window_s,
            )
        )
        return cls(
            mode=auth.mode,
            proxies=TrustedProxies(auth.trusted_proxies),
            limits=limits,
            session_ttl=timedelta(hours=auth.session_ttl_hours),
            trusted_origins=frozenset(o.strip().rstrip("/").lower() for o in server.cors_origins),
        )
