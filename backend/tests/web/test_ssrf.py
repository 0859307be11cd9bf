"""Address rules of web_fetch, including odd spellings of internal addresses."""

from __future__ import annotations

import ipaddress

import httpx
import pytest

from pronghorn.web.ssrf import BlockedURLError, blocked_reason, parse_ip_literal, vet_url

INTERNAL = [
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",  # CGNAT
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",
    "ff02::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254",
    "::127.0.0.1",  # IPv4-compatible
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b::7f00:1",
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2001:4860::8888"]


@pytest.mark.parametrize("address", INTERNAL)
def test_internal_addresses_blocked(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address), allow_private=False)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_allowed(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address), allow_private=False) is None


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "::ffff:a9fe:a9fe"],
)
def test_metadata_blocked_even_when_private_allowed(address: str) -> None:
    reason = blocked_reason(ipaddress.ip_address(address), allow_private=True)
    assert reason and "metadata" in reason


def test_private_allowed_when_configured() -> None:
    for address in ("127.0.0.1", "10.1.2.3", "::1", "192.168.0.1"):
        assert blocked_reason(ipaddress.ip_address(address), allow_private=True) is None


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("2852039166", "169.254.169.254"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("[::ffff:7f00:1]", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
    ],
)
def test_numeric_spellings_parsed(spelling: str, address: str) -> None:
    ip = parse_ip_literal(spelling)
    assert ip is not None
    mapped = getattr(ip, "ipv4_mapped", None)
    assert str(mapped or ip) == address


@pytest.mark.parametrize("host", ["example.com", "cafe.be", "deadbeef", "1.2.3.4.5"])
def test_names_are_not_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/",
        "http://0x7f000001:8080/",
        "http://0x7f.1/",
        "http://127.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/",
    ],
)
async def test_vet_refuses_internal_spellings_without_dns(url: str) -> None:
    async def no_dns(host: str, port: int) -> list[str]:
        raise AssertionError("literal addresses must not be resolved")

    with pytest.raises(BlockedURLError):
        await vet_url(httpx.URL(url), allow_private=False, resolver=no_dns)


@pytest.mark.parametrize(
    "url", ["ftp://example.com/x", "file:///etc/passwd", "gopher://x/", "http://u:p@example.com/"]
)
async def test_vet_refuses_schemes_and_credentials(url: str) -> None:
    with pytest.raises(BlockedURLError):
        await vet_url(httpx.URL(url), allow_private=False)


async def test_vet_refuses_name_with_any_internal_answer() -> None:
    async def mixed(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.0.0.5"]

    with pytest.raises(BlockedURLError, match=r"10\.0\.0\.5"):
        await vet_url(httpx.URL("http://mixed.test/"), allow_private=False, resolver=mixed)


async def test_vet_pins_first_public_answer() -> None:
    calls: list[tuple[str, int]] = []

    async def public(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]

    ip = await vet_url(httpx.URL("https://example.test/x"), allow_private=False, resolver=public)
    assert str(ip) == "93.184.216.34"
    assert calls == [("example.test", 443)]


async def test_localhost_refused_with_real_resolver() -> None:
    with pytest.raises(BlockedURLError, match="loopback"):
        await vet_url(httpx.URL("http://localhost:9/"), allow_private=False)
