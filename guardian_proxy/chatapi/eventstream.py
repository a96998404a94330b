"""The AWS event-stream binary framing (`application/vnd.amazon.eventstream`): Bedrock's ConverseStream and
InvokeModelWithResponseStream replies (also Transcribe, Lex, S3 Select …), bytes in → whole messages out.

A message is

    prelude   total length (u32, big-endian) · headers length (u32) · CRC32 of those 8 bytes (u32)
    headers   repeated: name length (u8) · name (UTF-8) · value type (u8) · value
    payload   total − headers − 16 bytes
    CRC32     of every byte before it (prelude and its CRC included)

Header value types: 0 true, 1 false (no value bytes), 2 byte (i8), 3 short (i16), 4 integer (i32),
5 long (i64), 6 byte array (u16 length + bytes), 7 string (u16 length + UTF-8), 8 timestamp (i64
milliseconds since the epoch), 9 UUID (16 bytes). The layout is the one botocore's parser reads
(botocore/eventstream.py), written here again because the proxy must also write messages back.

`Event.name` is the `:event-type` header (or `:exception-type` / `:error-code` for exception and error
messages), `Event.obj` the parsed JSON payload (None when the payload is not JSON: the message then passes
byte for byte). `encode` keeps the original header bytes and rewrites only the payload, recomputing both
lengths and both CRCs. With `unwrap=True` (InvokeModelWithResponseStream) a `chunk` event's payload
`{"bytes": base64(model chunk JSON), "p": padding…}` is opened: `obj` is the model's own chunk, and
`encode` wraps it back, keeping every other key of the envelope (the padding included).

A message whose prelude CRC or message CRC does not match, or that is longer than MAX_EVENT_BYTES, sets
`overflow`: the caller passes that message and the rest of the stream through unchanged.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import uuid
from dataclasses import dataclass, field

from .sse import MAX_EVENT_BYTES

PRELUDE = 12  # total length, headers length, prelude CRC
MIN_MESSAGE = PRELUDE + 4

BOOL_TRUE, BOOL_FALSE, BYTE, SHORT, INT, LONG, BYTES, STRING, TIMESTAMP, UUID = range(10)
_FIXED = {BYTE: ">b", SHORT: ">h", INT: ">i", LONG: ">q", TIMESTAMP: ">q"}


class FramingError(ValueError):
    """Bytes that are not a well-formed event-stream message."""


@dataclass
class Header:
    name: str
    type: int
    value: object  # bool, int, bytes (BYTES), str (STRING), int ms (TIMESTAMP), uuid.UUID (UUID)


@dataclass
class Event:
    raw: bytes  # the whole message as received (prelude to message CRC)
    headers: list[Header] = field(default_factory=list)
    payload: bytes = b""
    name: str | None = None
    obj: object = None  # the parsed payload (or, unwrapped, the model chunk inside it); None when not JSON
    envelope: dict | None = None  # unwrapped `chunk` events: the outer payload, `bytes` still encoded
    raw_headers: bytes = b""

    def header(self, name: str):
        return next((h.value for h in self.headers if h.name == name), None)

    @property
    def message_type(self) -> str | None:
        v = self.header(":message-type")
        return v if isinstance(v, str) else None


# ---------------------------------------------------------------------- headers


def parse_headers(data: bytes) -> list[Header]:
    out: list[Header] = []
    i, n = 0, len(data)
    while i < n:
        ln = data[i]
        i += 1
        if i + ln + 1 > n:
            raise FramingError("header name runs past the headers")
        name = data[i:i + ln].decode("utf-8")
        i += ln
        t = data[i]
        i += 1
        if t in (BOOL_TRUE, BOOL_FALSE):
            value: object = t == BOOL_TRUE
        elif t in _FIXED:
            fmt = _FIXED[t]
            size = struct.calcsize(fmt)
            if i + size > n:
                raise FramingError("header value runs past the headers")
            value = struct.unpack(fmt, data[i:i + size])[0]
            i += size
        elif t in (BYTES, STRING):
            if i + 2 > n:
                raise FramingError("header value runs past the headers")
            size = struct.unpack(">H", data[i:i + 2])[0]
            i += 2
            if i + size > n:
                raise FramingError("header value runs past the headers")
            raw = data[i:i + size]
            value = raw.decode("utf-8") if t == STRING else bytes(raw)
            i += size
        elif t == UUID:
            if i + 16 > n:
                raise FramingError("header value runs past the headers")
            value = uuid.UUID(bytes=bytes(data[i:i + 16]))
            i += 16
        else:
            raise FramingError(f"unknown header value type {t}")
        out.append(Header(name, t, value))
    return out


def encode_headers(headers: list[Header]) -> bytes:
    out = bytearray()
    for h in headers:
        name = h.name.encode("utf-8")
        if len(name) > 255:
            raise FramingError("header name longer than 255 bytes")
        t = h.type
        if t in (BOOL_TRUE, BOOL_FALSE):  # the type is the value; a bool given with either type wins
            t = BOOL_TRUE if (h.value if isinstance(h.value, bool) else t == BOOL_TRUE) else BOOL_FALSE
        out += bytes([len(name)]) + name + bytes([t])
        if t in _FIXED:
            out += struct.pack(_FIXED[t], int(h.value))
        elif t in (BYTES, STRING):
            raw = h.value.encode("utf-8") if isinstance(h.value, str) else bytes(h.value)
            if len(raw) > 0xFFFF:
                raise FramingError("header value longer than 65535 bytes")
            out += struct.pack(">H", len(raw)) + raw
        elif t == UUID:
            v = h.value
            out += v.bytes if isinstance(v, uuid.UUID) else bytes(v)
        elif t not in (BOOL_TRUE, BOOL_FALSE):
            raise FramingError(f"unknown header value type {t}")
    return bytes(out)


def string_headers(**values: str) -> list[Header]:
    """Headers of type string, named as given with `_` → `-` and a leading `:` (event_type → :event-type)."""
    return [Header(":" + k.replace("_", "-"), STRING, v) for k, v in values.items()]


# ---------------------------------------------------------------------- messages


def _crc(data: bytes, start: int = 0) -> int:
    return binascii.crc32(data, start) & 0xFFFFFFFF


def encode_message(headers: list[Header] | bytes, payload: bytes) -> bytes:
    """One whole message: `headers` as Header objects or as already encoded header bytes."""
    hb = headers if isinstance(headers, bytes | bytearray) else encode_headers(headers)
    total = PRELUDE + len(hb) + len(payload) + 4
    prelude = struct.pack(">II", total, len(hb))
    prelude += struct.pack(">I", _crc(prelude))
    body = prelude + hb + payload
    return body + struct.pack(">I", _crc(body))


def decode_message(raw: bytes) -> Event:
    """One whole message (its CRCs checked); raises FramingError."""
    if len(raw) < MIN_MESSAGE:
        raise FramingError("shorter than a message")
    total, hlen, pcrc = struct.unpack(">III", raw[:PRELUDE])
    if _crc(raw[:8]) != pcrc:
        raise FramingError("prelude CRC mismatch")
    if total != len(raw) or PRELUDE + hlen + 4 > total:
        raise FramingError("inconsistent lengths")
    if _crc(raw[:-4]) != struct.unpack(">I", raw[-4:])[0]:
        raise FramingError("message CRC mismatch")
    hb = raw[PRELUDE:PRELUDE + hlen]
    ev = Event(raw=bytes(raw), headers=parse_headers(hb), payload=bytes(raw[PRELUDE + hlen:-4]), raw_headers=bytes(hb))
    mtype = ev.message_type
    name = ev.header(":exception-type") if mtype == "exception" else ev.header(":error-code") if mtype == "error" \
        else ev.header(":event-type")
    ev.name = name if isinstance(name, str) else None
    return ev


def _dumps(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class EventStreamFramer:
    """Feed bytes, get whole messages; a partial message waits for its remaining bytes.

    Same interface as the SSE framers (`chatapi.sse`): `feed`, `rest`, `overflow`, `encode`, `buf`."""

    def __init__(self, unwrap: bool = False, max_bytes: int = MAX_EVENT_BYTES):
        self.buf = bytearray()
        self.overflow = False
        self.unwrap = unwrap
        self.max_bytes = max_bytes
        self._template: Event | None = None  # the last `event` message: headers for new ones

    def rest(self) -> bytes:
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def feed(self, data: bytes) -> list[Event]:
        self.buf += data
        out: list[Event] = []
        while not self.overflow and len(self.buf) >= PRELUDE:
            total, hlen, pcrc = struct.unpack(">III", self.buf[:PRELUDE])
            if _crc(bytes(self.buf[:8])) != pcrc or total < MIN_MESSAGE or PRELUDE + hlen + 4 > total \
                    or total > self.max_bytes:
                self.overflow = True  # not (or no longer) a stream we can follow: the rest passes as is
                break
            if len(self.buf) < total:
                break
            raw = bytes(self.buf[:total])
            try:
                ev = decode_message(raw)
            except (FramingError, UnicodeDecodeError, ValueError):
                self.overflow = True
                break
            del self.buf[:total]
            self._parse_payload(ev)
            if ev.message_type in (None, "event") and ev.name:
                self._template = ev
            out.append(ev)
        return out

    def _parse_payload(self, ev: Event) -> None:
        ctype = ev.header(":content-type")
        if isinstance(ctype, str) and "json" not in ctype.lower():
            return
        try:
            obj = json.loads(ev.payload) if ev.payload else None
        except (ValueError, UnicodeDecodeError):
            return
        if self.unwrap and ev.name == "chunk" and isinstance(obj, dict) and isinstance(obj.get("bytes"), str):
            try:
                inner = json.loads(base64.b64decode(obj["bytes"], validate=True))
            except (ValueError, UnicodeDecodeError, binascii.Error):
                return  # a chunk that is not base64 JSON passes byte for byte
            ev.envelope, ev.obj = obj, inner
            return
        ev.obj = obj

    def payload_for(self, ev: Event | None, name: str | None, obj) -> bytes:
        envelope = ev.envelope if ev is not None else None
        if self.unwrap and (envelope is not None or (ev is None and (name or "chunk") == "chunk")):
            return _dumps({**(envelope or {}), "bytes": base64.b64encode(_dumps(obj)).decode("ascii")})
        return _dumps(obj)

    def encode(self, ev: Event | None, name: str | None, obj) -> bytes:
        """`ev` given: the same message (its header bytes kept) with `obj` as payload; `ev` None: a new
        event message named `name`, with the headers of the last event seen (its `:event-type` replaced)."""
        payload = self.payload_for(ev, name, obj)
        if ev is not None:
            return encode_message(ev.raw_headers, payload)
        name = name or ("chunk" if self.unwrap else None)
        if self._template is not None:
            headers = [Header(h.name, h.type, name) if h.name == ":event-type" and name else h
                       for h in self._template.headers]
        else:
            headers = string_headers(event_type=name or "chunk", content_type="application/json",
                                     message_type="event")
        return encode_message(headers, payload)


def event_message(name: str, obj, wrap: bool = False, **extra) -> bytes:
    """A whole `event` message as a service writes it (tests and mock servers): JSON payload, or with
    `wrap` an InvokeModelWithResponseStream chunk {"bytes": base64(JSON), **extra}."""
    payload = _dumps(obj) if not wrap else _dumps({"bytes": base64.b64encode(_dumps(obj)).decode("ascii"), **extra})
    if extra and not wrap:
        payload = _dumps({**obj, **extra})
    return encode_message(string_headers(event_type=name, content_type="application/json", message_type="event"),
                          payload)


def exception_message(name: str, message: str) -> bytes:
    return encode_message(string_headers(exception_type=name, content_type="application/json",
                                         message_type="exception"), _dumps({"message": message}))
