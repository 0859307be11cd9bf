"""The frames of Feishu's long connection: protobuf (proto2) `pbbp2.Frame` messages, encoded
and decoded by hand (five field kinds; no protobuf runtime needed).

    message Header { required string key = 1; required string value = 2; }
    message Frame {
      required uint64 SeqID = 1;  required uint64 LogID = 2;
      required int32 service = 3; required int32 method = 4;   // 0 control, 1 data
      repeated Header headers = 5;
      optional string payload_encoding = 6; optional string payload_type = 7;
      optional bytes payload = 8; optional string LogIDNew = 9;
    }
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONTROL = 0
DATA = 1


class FrameError(ValueError):
    """Bytes that are not a well-formed Frame."""


@dataclass
class Frame:
    seq_id: int = 0
    log_id: int = 0
    service: int = 0
    method: int = CONTROL
    headers: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    payload_encoding: str | None = None
    payload_type: str | None = None
    payload: bytes | None = None
    log_id_new: str | None = None

    def header(self, key: str) -> str | None:
        return next((v for k, v in self.headers if k == key), None)


def _varint(value: int) -> bytes:
    if value < 0:
        value &= (1 << 64) - 1  # negative int32/int64: ten-byte two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _bytes_field(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _varint(len(data)) + data


def encode(frame: Frame) -> bytes:
    out = bytearray()
    for number, value in ((1, frame.seq_id), (2, frame.log_id), (3, frame.service)):
        out += _key(number, 0) + _varint(value)
    out += _key(4, 0) + _varint(frame.method)
    for k, v in frame.headers:
        header = _bytes_field(1, k.encode()) + _bytes_field(2, v.encode())
        out += _bytes_field(5, header)
    for number, text in ((6, frame.payload_encoding), (7, frame.payload_type)):
        if text is not None:
            out += _bytes_field(number, text.encode())
    if frame.payload is not None:
        out += _bytes_field(8, frame.payload)
    if frame.log_id_new is not None:
        out += _bytes_field(9, frame.log_id_new.encode())
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def varint(self) -> int:
        value = shift = 0
        while True:
            if self.pos >= len(self.data) or shift > 63:
                raise FrameError("truncated varint")
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise FrameError("truncated field")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def fields(self) -> list[tuple[int, int | bytes]]:
        out: list[tuple[int, int | bytes]] = []
        while self.pos < len(self.data):
            key = self.varint()
            number, wire = key >> 3, key & 7
            if wire == 0:
                out.append((number, self.varint()))
            elif wire == 2:
                out.append((number, self.take(self.varint())))
            elif wire == 1:
                out.append((number, int.from_bytes(self.take(8), "little")))
            elif wire == 5:
                out.append((number, int.from_bytes(self.take(4), "little")))
            else:
                raise FrameError(f"unsupported wire type {wire}")
        return out


def _signed32(value: int) -> int:
    value &= (1 << 32) - 1
    return value - (1 << 32) if value >= 1 << 31 else value


def _text(value: bytes) -> str:
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise FrameError("a string field is not UTF-8") from None


def decode(data: bytes) -> Frame:
    frame = Frame()
    for number, value in _Reader(data).fields():
        if isinstance(value, int):
            if number == 1:
                frame.seq_id = value
            elif number == 2:
                frame.log_id = value
            elif number == 3:
                frame.service = _signed32(value)
            elif number == 4:
                frame.method = _signed32(value)
            elif number in (5, 6, 7, 8, 9):
                raise FrameError(f"field {number} is not length-delimited")
        elif number in (1, 2, 3, 4):
            raise FrameError(f"field {number} is not a number")
        elif number == 5:
            parts = {n: v for n, v in _Reader(value).fields() if isinstance(v, bytes)}
            frame.headers.append((_text(parts.get(1, b"")), _text(parts.get(2, b""))))
        elif number == 6:
            frame.payload_encoding = _text(value)
        elif number == 7:
            frame.payload_type = _text(value)
        elif number == 8:
            frame.payload = value
        elif number == 9:
            frame.log_id_new = _text(value)
    return frame
