"""Which addresses ``web_fetch`` may connect to.

A URL is vetted by resolving its host once and checking every address; the fetcher then
connects to the vetted address itself (pinning), so a DNS answer that changes between the
check and the connection (rebinding) cannot redirect the request.

Refused unless ``allow_private_addresses``: private, loopback, link-local, multicast,
reserved, unspecified, shared (CGNAT) and every other non-global address, including the same
addresses spelled as IPv4-mapped / -compatible / 6to4 / NAT64 / Teredo IPv6, and IPv4
written in decimal, octal or hex (``2130706433``, ``0177.0.0.1``, ``0x7f.1``).
Always refused, even with ``allow_private_addresses``: cloud metadata endpoints
(169.254.0.0/16 including 169.254.169.254, fd00:ec2::254, 100.100.100.200).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``(host, port) -> addresses``; the default uses ``loop.getaddrinfo``."""

ALLOWED_SCHEMES = ("http", "https")

ALWAYS_BLOCKED = tuple(
    ipaddress.ip_network(n)
    for n in (
        "169.254.0.0/16",  # link-local IPv4: AWS/GCP/Azure/OpenStack metadata, ECS 169.254.170.2
        "fd00:ec2::254/128",  # AWS metadata over IPv6
        "100.100.100.200/32",  # Alibaba Cloud metadata
    )
)
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPAT = ipaddress.ip_network("::/96")
_NUMERIC_HOST = re.compile(r"[0-9a-fA-FxX.]+")


class FetchError(Exception):
    """The URL could not be fetched; ``str(error)`` is safe to show to the model."""


class BlockedURLError(FetchError):
    """The URL (or one of its redirects) points at a refused scheme or address."""


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host string denotes by itself (no DNS), in any spelling, else None."""
    h = host.strip().rstrip(".")
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if _NUMERIC_HOST.fullmatch(h):
        try:  # inet_aton accepts the legacy forms: 127.1, 2130706433, 0x7f.0.0.1, 0177.0.0.1
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in net for net in _NAT64) or (ip in _IPV4_COMPAT and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def blocked_reason(ip: IPAddress, *, allow_private: bool) -> str | None:
    """Why connecting to ``ip`` is refused, or None when it is allowed."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        inner = _embedded_ipv4(ip)
        if inner is not None:
            why = blocked_reason(inner, allow_private=allow_private)
            if why:
                return f"{why} (embedded in {ip})"
    if any(ip in net for net in ALWAYS_BLOCKED):
        return f"{ip} is a cloud metadata / link-local address"
    if allow_private:
        return None
    for flag in (
        "is_loopback",
        "is_private",
        "is_link_local",
        "is_multicast",
        "is_reserved",
        "is_unspecified",
    ):
        if getattr(ip, flag):
            return f"{ip} is a {flag[3:].replace('_', '-')} address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return f"{ip} is a site-local address"
    if not ip.is_global:
        return f"{ip} is not a public address"
    return None


async def default_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def default_port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def check_static(url: httpx.URL, *, allow_private: bool) -> IPAddress | None:
    """The checks that need no DNS: scheme, host, credentials, and a literal address.

    Returns the literal address when the host is one (already vetted), else None; raises
    :class:`BlockedURLError` when the URL is refused.
    """
    if url.scheme not in ALLOWED_SCHEMES:
        raise BlockedURLError(f"Only http and https URLs can be fetched, not {url.scheme!r}.")
    host = url.host
    if not host:
        raise BlockedURLError("The URL has no host.")
    if url.userinfo:
        raise BlockedURLError("URLs with embedded credentials (user:pass@) are not fetched.")
    literal = parse_ip_literal(host)
    if literal is not None:
        why = blocked_reason(literal, allow_private=allow_private)
        if why:
            raise BlockedURLError(
                f"Refusing to connect to {host!r}: {why}. Only public internet addresses "
                "are allowed."
            )
    return literal


async def vet_url(
    url: httpx.URL, *, allow_private: bool, resolver: Resolver | None = None
) -> IPAddress:
    """Check ``url`` and return the one address the request must connect to."""
    literal = check_static(url, allow_private=allow_private)
    host = url.host
    if literal is not None:
        candidates: list[IPAddress] = [literal]
    else:
        try:
            answers = await (resolver or default_resolver)(host, default_port(url))
        except (OSError, UnicodeError) as exc:
            raise FetchError(f"Could not resolve host {host!r}: {exc}") from None
        candidates = []
        for answer in answers:
            try:
                candidates.append(ipaddress.ip_address(answer.split("%", 1)[0]))
            except ValueError:
                continue
        if not candidates:
            raise FetchError(f"Could not resolve host {host!r}.")
    # Every answer must be allowed: a name that also resolves to an internal address is
    # refused outright rather than hoping the allowed one gets picked.
    for ip in candidates:
        why = blocked_reason(ip, allow_private=allow_private)
        if why:
            raise BlockedURLError(
                f"Refusing to connect to {host!r}: {why}. Only public internet addresses "
                "are allowed."
            )
    return candidates[0]


def pinned_request(
    url: httpx.URL, ip: IPAddress
) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
    """The URL to send (host replaced by the vetted IP), the Host header and extensions.

    For https the original name stays the SNI name, which is also the name the server's
    certificate is checked against.
    """
    host = url.host
    default = 443 if url.scheme == "https" else 80
    host_header = f"[{host}]" if ":" in host else host
    if url.port and url.port != default:
        host_header = f"{host_header}:{url.port}"
    extensions: dict[str, str] = {}  # httpx's request extensions: here only the SNI name
    if url.scheme == "https" and parse_ip_literal(host) is None:
        extensions["sni_hostname"] = host
    return url.copy_with(host=str(ip)), {"Host": host_header}, extensions
