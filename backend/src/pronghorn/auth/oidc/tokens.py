"""ID token verification (OpenID Connect Core 1.0, 3.1.3.7): signature by one of the
issuer's keys with an allowed asymmetric algorithm, iss, aud (and azp), exp and iat with a
small leeway, and the nonce this login sent."""

from __future__ import annotations

import hmac
from collections.abc import Sequence

from pronghorn.auth.oidc.discovery import SUPPORTED_ALGORITHMS, SigningKey
from pronghorn.auth.oidc.errors import OidcError
from pronghorn.auth.oidc.json_views import as_list

LEEWAY_S = 60

Claims = dict[str, object]

# The key type (and EC curve) each algorithm signs with.
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC"}
_CURVES = {"ES256": "P-256", "ES384": "P-384"}


def token_header(token: str) -> tuple[str, str | None]:
    """(alg, kid) of a compact JWS, without verifying anything."""
    import jwt  # PyJWT: loaded on the first OIDC login, not at every start

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise OidcError("ID token refused: it is not a signed JWT") from None
    alg = header.get("alg")
    kid = header.get("kid")
    if not isinstance(alg, str):
        raise OidcError("ID token refused: its header names no algorithm")
    return alg, kid if isinstance(kid, str) else None


def allowed_algorithms(advertised: Sequence[str]) -> tuple[str, ...]:
    """What we accept: the issuer's advertised algorithms that we support (asymmetric)."""
    return tuple(a for a in advertised if a in SUPPORTED_ALGORITHMS)


def pick_key(keys: Sequence[SigningKey], alg: str, kid: str | None) -> SigningKey | None:
    """The key that may verify an `alg` signature by key `kid` (any fitting key when the
    token names none)."""
    for key in keys:
        if kid is not None and key.kid != kid:
            continue
        if key.kty != _KEY_TYPES.get(alg[:2]) or (key.alg is not None and key.alg != alg):
            continue
        if alg in _CURVES and key.crv != _CURVES[alg]:
            continue
        return key
    return None


def verify_id_token(
    token: str,
    *,
    keys: Sequence[SigningKey],
    issuer: str,
    client_id: str,
    nonce: str,
    algorithms: Sequence[str],
    leeway_s: int = LEEWAY_S,
) -> Claims:
    """The claims of `token` once every check passed; OidcError(400) naming the first
    that failed."""
    import jwt  # PyJWT: loaded on the first OIDC login, not at every start

    alg, kid = token_header(token)
    if alg not in algorithms:
        raise OidcError(f"ID token refused: algorithm {alg!r} is not allowed")
    key = pick_key(keys, alg, kid)
    if key is None:
        raise OidcError(f"ID token refused: the issuer has no {alg} key {kid or ''}".rstrip())
    try:
        claims = jwt.decode(
            token,
            key.key.key,
            algorithms=[alg],
            audience=client_id,
            issuer=issuer,
            leeway=leeway_s,
            options={"require": ["iss", "sub", "aud", "exp", "iat"]},
        )
    except jwt.InvalidSignatureError:
        raise OidcError("ID token refused: bad signature") from None
    except jwt.ExpiredSignatureError:
        raise OidcError("ID token refused: expired") from None
    except jwt.ImmatureSignatureError:
        raise OidcError("ID token refused: issued in the future") from None
    except jwt.InvalidAudienceError:
        raise OidcError("ID token refused: not issued for this client (aud)") from None
    except jwt.InvalidIssuerError:
        raise OidcError("ID token refused: wrong issuer (iss)") from None
    except jwt.MissingRequiredClaimError as exc:
        raise OidcError(f"ID token refused: no {exc.claim} claim") from None
    except (jwt.PyJWTError, ValueError, TypeError) as exc:
        raise OidcError(f"ID token refused: {type(exc).__name__}") from None
    out: Claims = {str(k): v for k, v in claims.items()}
    aud = out.get("aud")
    azp = out.get("azp")
    if len(as_list(aud) or ()) > 1 and azp != client_id:
        raise OidcError("ID token refused: several audiences and azp is not this client")
    if azp is not None and azp != client_id:
        raise OidcError("ID token refused: authorized party (azp) is not this client")
    sent = out.get("nonce")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), nonce.encode()):
        raise OidcError("ID token refused: nonce mismatch (a replayed or foreign token)")
    sub = out.get("sub")
    if not isinstance(sub, str) or not sub:
        raise OidcError("ID token refused: empty subject")
    return out
