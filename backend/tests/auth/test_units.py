"""The pure parts: failure limits on an injected clock, proxy resolution, same-origin."""

from __future__ import annotations

import pytest

from pronghorn.auth.authenticator import AuthError
from pronghorn.auth.origin import same_origin
from pronghorn.auth.proxies import TrustedProxies
from pronghorn.auth.ratelimit import AuthLimits, FailureLimiter
from pronghorn.auth.startup import refusal, setup_link
from pronghorn.auth.tokens import digest, new_api_key
from pronghorn.config.schema.app import AppConfig


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_limiter_sliding_window() -> None:
    clock = Clock()
    limiter = FailureLimiter(limit=3, window_s=60, clock=clock)
    for _ in range(2):
        limiter.failed("a")
        clock.now += 10
    assert limiter.retry_after("a") is None
    limiter.failed("a")  # failures at 1000, 1010, 1020
    assert limiter.retry_after("a") == pytest.approx(40)  # until 1000 + 60
    assert limiter.retry_after("b") is None
    clock.now = 1060.5  # the first failure left the window
    assert limiter.retry_after("a") is None
    limiter.reset("a")
    assert limiter.retry_after("a") is None


def test_limiter_memory_is_bounded() -> None:
    clock = Clock()
    limiter = FailureLimiter(limit=2, window_s=60, clock=clock, max_keys=10)
    for n in range(100):
        limiter.failed(f"ip{n}")
    assert len(limiter._failures) <= 10


async def test_auth_limits_raise_429_with_retry_after() -> None:
    clock = Clock()
    limits = AuthLimits(per_ip=5, per_account=2, window_s=100, clock=clock)
    await limits.failed("1.2.3.4", "alice")
    await limits.failed("1.2.3.5", "alice")
    with pytest.raises(AuthError) as exc:
        await limits.check("9.9.9.9", "alice")
    assert exc.value.status == 429 and exc.value.retry_after_s == pytest.approx(100)
    await limits.check("1.2.3.4", "bob")  # other account: fine
    await limits.succeeded("alice")
    await limits.check("1.2.3.4", "alice")


@pytest.mark.parametrize(
    ("peer", "xff", "expected"),
    [
        ("10.0.0.5", "203.0.113.9", "203.0.113.9"),
        ("10.0.0.5", "1.1.1.1, 203.0.113.9", "203.0.113.9"),  # left entries are the client's
        ("10.0.0.5", "203.0.113.9, 10.0.0.7", "203.0.113.9"),  # skip trusted hops
        ("10.0.0.5", "garbage", "10.0.0.5"),
        ("10.0.0.5", None, "10.0.0.5"),
        ("192.0.2.1", "203.0.113.9", "192.0.2.1"),  # untrusted peer: header ignored
        ("::ffff:10.0.0.5", "203.0.113.9", "203.0.113.9"),
    ],
)
def test_client_ip(peer: str, xff: str | None, expected: str) -> None:
    assert TrustedProxies(["10.0.0.0/8"]).client_ip(peer, xff) == expected


def test_no_trusted_proxies_means_the_peer() -> None:
    proxies = TrustedProxies([])
    assert proxies.client_ip("127.0.0.1", "6.6.6.6") == "127.0.0.1"
    assert not proxies.is_https("http", "127.0.0.1", "https")
    assert TrustedProxies(["127.0.0.1"]).is_https("http", "127.0.0.1", "https")


def test_bad_trusted_proxy_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="not an IP address"):
        AppConfig.model_validate({"auth": {"trusted_proxies": ["nginx"]}})


@pytest.mark.parametrize(
    ("origin", "host", "ok"),
    [
        ("http://127.0.0.1:2026", "127.0.0.1:2026", True),
        ("https://chat.example.com", "chat.example.com", True),
        ("http://chat.example.com", "chat.example.com:80", True),
        ("http://evil.example", "127.0.0.1:2026", False),
        ("http://127.0.0.1:9999", "127.0.0.1:2026", False),
        ("null", "127.0.0.1:2026", False),
        ("http://localhost:5173", "127.0.0.1:2026", True),  # listed in trusted
    ],
)
def test_same_origin(origin: str, host: str, ok: bool) -> None:
    assert same_origin(origin, host, frozenset({"http://localhost:5173"})) is ok


def test_mode_none_only_on_loopback() -> None:
    assert refusal("none", "127.0.0.1") is None and refusal("none", "::1") is None
    assert refusal("none", "localhost") is None
    assert "refused" in (refusal("none", "0.0.0.0") or "")
    assert refusal("local", "0.0.0.0") is None


def test_keys_and_link() -> None:
    key = new_api_key()
    assert key.startswith("phk_") and len(key) == 4 + 43 and digest(key) != key
    cfg = AppConfig.model_validate({"server": {"host": "0.0.0.0", "port": 9000}})
    assert setup_link(cfg, "t0k") == "http://localhost:9000/setup?token=t0k"
    assert AppConfig().auth.mode == "local"
