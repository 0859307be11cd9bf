"""WeCom's callback envelope (the "WXBizMsgCrypt" scheme of its developer docs).

The key is base64 of the 43-character EncodingAESKey plus "=" (32 bytes); the IV is its
first 16 bytes. A message encrypts as AES-256-CBC of `random(16) + len(msg) (4 bytes, big
endian) + msg + CorpID`, padded PKCS#7-style to a multiple of 32 bytes, then base64. Every
callback is signed: `msg_signature` is the hex SHA-1 of the sorted, concatenated
`[token, timestamp, nonce, encrypted]`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct

from pronghorn.channels.errors import BadSignature

_BLOCK = 32


def _key(encoding_aes_key: str) -> bytes:
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except (binascii.Error, ValueError):
        raise BadSignature("encoding_aes_key is not base64") from None
    if len(key) != 32:
        raise BadSignature("encoding_aes_key has a bad length")
    return key


def signature(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()


def verify(token: str, timestamp: str, nonce: str, encrypted: str, given: str) -> None:
    if not timestamp or not nonce or not given:
        raise BadSignature("missing msg_signature, timestamp or nonce")
    if not hmac.compare_digest(signature(token, timestamp, nonce, encrypted), given.lower()):
        raise BadSignature("signature mismatch")


def decrypt(encoding_aes_key: str, corp_id: str, encrypted: str) -> bytes:
    """The message inside `encrypted`; BadSignature when it does not decrypt or was meant
    for another CorpID."""
    # cryptography: only for a WeCom channel, not at every start
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key = _key(encoding_aes_key)
    try:
        raw = base64.b64decode(encrypted, validate=True)
    except (binascii.Error, ValueError):
        raise BadSignature("Encrypt is not base64") from None
    if not raw or len(raw) % 16:
        raise BadSignature("Encrypt has a bad length")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = decryptor.update(raw) + decryptor.finalize()
    pad = plain[-1]
    if not 1 <= pad <= _BLOCK or plain[-pad:] != bytes([pad]) * pad:
        raise BadSignature("Encrypt does not decrypt with the encoding_aes_key")
    body = plain[16:-pad]
    if len(body) < 4:
        raise BadSignature("Encrypt is too short")
    (size,) = struct.unpack(">I", body[:4])
    message, receiver = body[4 : 4 + size], body[4 + size :]
    if len(message) != size or not hmac.compare_digest(receiver, corp_id.encode()):
        raise BadSignature("Encrypt is not for this CorpID")
    return message
