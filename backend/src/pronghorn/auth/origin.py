"""Same-origin test for cookie-authenticated writes (the CSRF check's second half)."""

from __future__ import annotations

from urllib.parse import urlsplit


def _split(netloc: str, scheme: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if not host:
        return None
    return host, port or (443 if scheme == "https" else 80)


def same_origin(origin: str, host_header: str | None, trusted: frozenset[str]) -> bool:
    """Whether `Origin` names the host:port the request was sent to (any scheme: a TLS
    proxy in front changes it), or is one of the `trusted` origins."""
    value = origin.strip().rstrip("/").lower()
    if value in trusted and value != "null":
        return True
    if host_header is None:
        return False
    scheme, sep, netloc = value.partition("://")
    if not sep or scheme not in ("http", "https") or "/" in netloc or "@" in netloc:
        return False
    want = _split(netloc, scheme)
    if want is None:
        return False
    for host_scheme in ("http", "https"):  # a Host without a port: either default port
        got = _split(host_header.strip().lower(), host_scheme)
        if got is not None and got == want:
            return True
    return False
