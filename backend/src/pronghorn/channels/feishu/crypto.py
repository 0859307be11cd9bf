"""The event subscription's envelope: decrypting `{"encrypt": …}` bodies and checking
`X-Lark-Signature` (https://open.feishu.cn/document/server-docs/event-subscription-guide).

Encrypted bodies are AES-256-CBC: the key is SHA-256 of the Encrypt Key, the payload is
base64 of IV (16 bytes) + ciphertext, PKCS#7 padded. The signature is the hex SHA-256 of
`timestamp + nonce + encrypt_key` followed by the raw body bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from pronghorn.channels.errors import BadSignature


def decrypt(encrypt_key: str, payload: str) -> bytes:
    """The plaintext of an `encrypt` field (BadSignature when it does not decrypt)."""
    # cryptography: only for a Feishu channel with an encrypt key, not at every start
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise BadSignature("encrypt is not base64") from None
    if len(raw) < 32 or len(raw) % 16:
        raise BadSignature("encrypt has a bad length")
    key = hashlib.sha256(encrypt_key.encode("utf-8")).digest()
    decryptor = Cipher(algorithms.AES(key), modes.CBC(raw[:16])).decryptor()
    padded = decryptor.update(raw[16:]) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError:  # a wrong key shows as bad padding (almost always)
        raise BadSignature("event does not decrypt with the encrypt_key") from None


def signature(encrypt_key: str, timestamp: str, nonce: str, body: bytes) -> str:
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()


def verify_signature(encrypt_key: str, timestamp: str, nonce: str, body: bytes, given: str) -> None:
    if not timestamp or not given:
        raise BadSignature("missing X-Lark-Signature or X-Lark-Request-Timestamp")
    if not hmac.compare_digest(signature(encrypt_key, timestamp, nonce, body), given.lower()):
        raise BadSignature("signature mismatch")
