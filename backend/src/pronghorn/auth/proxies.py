"""Who the client is behind a reverse proxy: `X-Forwarded-For` / `X-Forwarded-Proto` are
believed only when the direct peer is one of `auth.trusted_proxies` (IPs or CIDRs)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """The networks of `entries` ("10.0.0.1", "10.0.0.0/8", "::1"); ValueError names a bad one."""
    networks: list[Network] = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or CIDR network") from None
    return tuple(networks)


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = value.strip()
    if text.startswith("[") and "]" in text:  # "[::1]:1234"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "1.2.3.4:1234"
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


class TrustedProxies:
    def __init__(self, entries: Iterable[str]) -> None:
        self.networks = parse_networks(entries)

    def trusts(self, peer: str | None) -> bool:
        if peer is None or not self.networks:
            return False
        address = _address(peer)
        if address is None:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    def client_ip(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The client's address: the peer itself unless it is a trusted proxy, then the
        right-most `X-Forwarded-For` entry that is not a trusted proxy (entries left of it
        were written by the client and prove nothing)."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                return peer  # a garbled header: fall back to the proxy itself
            if not self.trusts(str(address)):
                return str(address)
        first = _address(hops[0]) if hops else None
        return str(first) if first is not None else peer

    def is_https(self, scheme: str, peer: str | None, forwarded_proto: str | None) -> bool:
        if scheme == "https":
            return True
        if forwarded_proto and self.trusts(peer):
            return forwarded_proto.split(",")[0].strip().lower() == "https"
        return False
