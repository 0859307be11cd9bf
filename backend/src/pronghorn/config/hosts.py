"""Host names as ``server.allowed_hosts`` holds them, and how a request's host is matched.

A pattern is a host name or IP address (no scheme, port or path), ``*.example.com`` (any
subdomain of example.com, not example.com itself) or ``*`` (anything). Host values from
requests (``Host:``, the host of an ``Origin:``) are normalised the same way: lower case,
port and IPv6 brackets dropped, one trailing dot dropped.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

LOOPBACK_NAMES: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")

_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$")


def _is_ipv6(value: str) -> bool:
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def normalize_host(value: str) -> str | None:
    """``"Example.COM:2026"`` -> ``"example.com"``, ``"[::1]:80"`` -> ``"::1"``; None when
    the value is not a host (empty, a bad port, stray characters)."""
    value = value.strip().lower()
    if value.startswith("["):
        inside, sep, rest = value[1:].partition("]")
        if not sep or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return inside if _is_ipv6(inside) else None
    if value.count(":") > 1:  # a bare IPv6 address (patterns may be written so)
        return value if _is_ipv6(value) else None
    host, sep, port = value.partition(":")
    if sep and not port.isdigit():
        return None
    if host.endswith("."):
        host = host[:-1]
    return host if _NAME.match(host) and ".." not in host else None


def check_host_pattern(pattern: str) -> str:
    """The normalised pattern, or ValueError saying what is wrong with it."""
    raw = pattern.strip().lower()
    if raw == "*":
        return raw
    if "/" in raw or "@" in raw:
        raise ValueError(f"{pattern!r}: give a host name only, without scheme, user or path")
    wildcard = raw.startswith("*.")
    name = raw[2:] if wildcard else raw
    host = normalize_host(name)
    if host is None:
        raise ValueError(f"{pattern!r} is not a host name or IP address")
    if host != name.strip("[]").removesuffix("."):
        raise ValueError(f"{pattern!r}: give the host without a port (every port matches)")
    return f"*.{host}" if wildcard else host


class HostPatterns:
    """A set of (already checked) patterns; ``match`` takes a normalised host."""

    def __init__(self, patterns: Iterable[str]) -> None:
        checked = [check_host_pattern(p) for p in patterns]
        self.any = "*" in checked
        self.exact = frozenset(p for p in checked if not p.startswith("*"))
        self.suffixes = tuple(p[1:] for p in checked if p.startswith("*."))

    def __bool__(self) -> bool:
        return self.any or bool(self.exact) or bool(self.suffixes)

    def match(self, host: str) -> bool:
        return self.any or host in self.exact or host.endswith(self.suffixes)
