"""protobuf and gRPC bodies, read from the wire format by hand (no schema, no dependency).

A message is a list of fields (tag varint, then a varint, 8 bytes, 4 bytes or a length-delimited payload).
A length-delimited payload that is printable UTF-8 is a text field; one that parses completely as a message
is walked as a nested message; anything else is opaque bytes (never a field). Paths are the field numbers
from the outside in: ``proto:1.3`` (field 3 of the message in field 1), ``proto:1.3#1`` (its 2nd occurrence),
``proto:2@1`` (field 2 of the 2nd gRPC frame); text inside a field may hold a document
(``proto:4>$.email``).

gRPC (``application/grpc``, ``application/grpc-web``) frames a message as 1 flag byte + a 4-byte big-endian
length; gRPC-web text is the base64 of those frames. A compressed frame (flag 1) is read when its payload
announces gzip/zlib/zstd by its magic bytes.

Write-back re-encodes the lengths (varints) of every changed field and of the messages around it, and fixes
the gRPC frame lengths; every other byte is kept. It raises BodyError where that cannot be done safely
(a frame cut off before its end). Groups (wire types 3/4) and malformed bytes end the parse of a message:
what follows is kept as it is and flagged ``unparsed``. Nesting depth and field count are bounded.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

from .. import codec
from ..errors import BodyError
from .model import Ctx

MAX_DEPTH = 16
MAX_FIELDS = 20_000
FRAMED = ("application/grpc", "application/grpc+proto", "application/grpc-web", "application/grpc-web+proto")
TEXT_FRAMED = ("application/grpc-web-text", "application/grpc-web-text+proto")
PLAIN = ("application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf",
         "application/x-google-protobuf")
TYPES = FRAMED + TEXT_FRAMED + PLAIN
_TEXT_CTRL = frozenset(range(0x20)) - {0x09, 0x0A, 0x0D}


@dataclass
class PField:
    num: int
    raw: bytes  # the whole field as sent (tag, length, payload)
    tag: bytes  # the tag varint
    kind: str  # text | msg | bytes | scalar
    text: str | None = None
    msg: Message | None = None


@dataclass
class Message:
    fields: list[PField] = field(default_factory=list)
    rest: bytes = b""  # bytes after what parsed (a group, a malformed or cut-off field), kept as sent


@dataclass
class Frame:
    flag: int
    head: bytes  # the 5 header bytes as sent
    payload: bytes
    msg: Message | None
    coding: str | None = None  # compression of the payload (flag 1)
    cut: bool = False  # the frame's length runs past the end of the body


@dataclass
class Proto:
    msg: Message | None = None  # a bare message
    frames: list[Frame] | None = None  # gRPC framing
    tail: bytes = b""  # bytes after the last frame that are not a frame
    b64: bool = False  # gRPC-web text


class _Budget:
    def __init__(self):
        self.left = MAX_FIELDS


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, next position); ValueError when the varint is cut off or longer than 10 bytes."""
    val = shift = 0
    for i in range(pos, min(pos + 10, len(buf))):
        b = buf[i]
        val |= (b & 0x7F) << shift
        if b < 0x80:
            return val, i + 1
        shift += 7
    raise ValueError("bad varint")


def _enc_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _is_text(payload: bytes) -> str | None:
    if not payload or any(b in _TEXT_CTRL for b in payload[:4096]) or 0x7F in payload[:4096]:
        return None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if len(payload) <= 4096 or not any(b in _TEXT_CTRL for b in payload) else None


def parse_message(buf: bytes, depth: int, budget: _Budget, strict: bool) -> Message | None:
    """The fields of `buf`. strict: None unless every byte parses (a nested message is never guessed from
    bytes that merely start like one); otherwise the parse stops at the first bad field, the rest kept."""
    msg, pos = Message(), 0
    while pos < len(buf):
        start = pos
        try:
            if budget.left <= 0:
                raise ValueError("field budget")
            key, pos = _varint(buf, pos)
            num, wt = key >> 3, key & 7
            if num == 0:
                raise ValueError("field 0")
            tag = buf[start:pos]
            if wt == 0:
                _v, pos = _varint(buf, pos)
                kind = "scalar"
            elif wt in (1, 5):
                pos += 8 if wt == 1 else 4
                if pos > len(buf):
                    raise ValueError("cut off")
                kind = "scalar"
            elif wt == 2:
                n, pos = _varint(buf, pos)
                if pos + n > len(buf):
                    raise ValueError("cut off")
                payload = buf[pos : pos + n]
                pos += n
                kind = "bytes"
            else:  # groups (3/4) and wire types 6/7: not read
                raise ValueError(f"wire type {wt}")
        except ValueError:
            if strict:
                return None
            msg.rest = buf[start:]
            return msg
        budget.left -= 1
        f = PField(num, buf[start:pos], tag, kind)
        if wt == 2:
            _payload(f, payload, depth, budget)
        msg.fields.append(f)
    return msg if msg.fields or not strict else None


def _payload(f: PField, payload: bytes, depth: int, budget: _Budget) -> None:
    text = _is_text(payload)
    sub = None
    if depth < MAX_DEPTH and payload:
        saved = budget.left
        sub = parse_message(payload, depth + 1, budget, strict=True)
        if sub is not None and text is not None and not all(c.kind in ("text", "msg") for c in sub.fields):
            sub = None  # printable text that happens to parse: it is text
        if sub is None:
            budget.left = saved
    if sub is not None:
        f.kind, f.msg = "msg", sub
    elif text is not None:
        f.kind, f.text = "text", text


def parse(data: bytes, ctype: str, flags: list[str], limit: int = 8 << 20) -> Proto | None:
    """A protobuf or gRPC body, or None when it is neither (it stays binary)."""
    budget = _Budget()
    pr = Proto()
    if ctype in TEXT_FRAMED:
        try:
            data = _b64decode(data)
        except (binascii.Error, ValueError):
            return None
        pr.b64 = True
    if ctype in FRAMED or ctype in TEXT_FRAMED:
        frames = _frames(data, budget, flags, limit)
        if frames is not None:
            pr.frames, pr.tail = frames
            return pr
        if pr.b64:
            return None
    msg = parse_message(data, 0, budget, strict=False)
    if msg is None or (not msg.fields and msg.rest):
        return None
    if msg.rest:
        flags += [f for f in ("unparsed",) if f not in flags]
    pr.msg = msg
    return pr


def _b64decode(data: bytes) -> bytes:
    """gRPC-web text: base64 chunks, each padded, one after the other."""
    s = b"".join(data.split())
    out, pos = bytearray(), 0
    while pos < len(s):
        end = s.find(b"=", pos)
        if end < 0:
            end = len(s)
        else:
            while end < len(s) and s[end : end + 1] == b"=":
                end += 1
        out += base64.b64decode(s[pos:end], validate=True)
        pos = end
    return bytes(out)


def _frames(data: bytes, budget: _Budget, flags: list[str], limit: int) -> tuple[list[Frame], bytes] | None:
    frames, pos = [], 0
    while pos + 5 <= len(data):
        flag = data[pos]
        if flag not in (0, 1, 0x80, 0x81):
            break
        n = int.from_bytes(data[pos + 1 : pos + 5], "big")
        payload = data[pos + 5 : pos + 5 + n]
        cut = len(payload) < n
        fr = Frame(flag, data[pos : pos + 5], payload, None, cut=cut)
        body = payload
        if flag & 1:
            fr.coding = codec.sniff(payload)
            try:
                body = codec.decode(payload, fr.coding, limit) if fr.coding else None
            except Exception:  # BodyError, BodyTooLarge: left unread
                body = None
        if body is not None and not flag & 0x80:
            fr.msg = parse_message(body, 0, budget, strict=False)
            if fr.msg is not None and fr.msg.rest:
                flags += [f for f in ("unparsed",) if f not in flags]
        elif not flag & 0x80:
            flags += [f for f in ("unparsed",) if f not in flags]
        frames.append(fr)
        pos += 5 + len(payload)
        if cut:
            flags += [f for f in ("truncated",) if f not in flags]
            break
    if not frames:
        return None
    return frames, data[pos:]


# --------------------------------------------------------------------------- walk / write back


def visit(pr: Proto, ctx: Ctx) -> bytes | None:
    if pr.frames is None:
        out = _visit_msg(pr.msg, ctx, "proto:", "")
        return out if ctx.build else None
    parts = []
    for i, fr in enumerate(pr.frames):
        new = _visit_msg(fr.msg, ctx, "proto:", f"@{i}" if i else "") if fr.msg is not None else None
        if not ctx.build:
            continue
        if new is None:
            parts.append(fr.head + fr.payload)
            continue
        if fr.cut:
            raise BodyError("cannot rewrite a gRPC frame that is cut off")
        payload = codec.encode(new, fr.coding) if fr.coding else new
        parts.append(bytes([fr.flag]) + len(payload).to_bytes(4, "big") + payload)
    if not ctx.build:
        return None
    out = b"".join(parts) + pr.tail
    return base64.b64encode(out) if pr.b64 else out


def _visit_msg(msg: Message, ctx: Ctx, prefix: str, suffix: str) -> bytes | None:
    """Collect the text fields; build mode: the message bytes, or None when nothing in it changed."""
    out, changed = [], False
    for f in msg.fields:
        path = f"{prefix}{f.num}"
        new: bytes | None = None
        if f.kind == "text":
            r = ctx.leaf(path + suffix, f.text, None, 0)
            new = r.encode("utf-8") if r is not None else None
        elif f.kind == "msg":
            new = _visit_msg(f.msg, ctx, path + ".", suffix)
        if ctx.build:
            if new is None:
                out.append(f.raw)
            else:
                changed = True
                out.append(f.tag + _enc_varint(len(new)) + new)
    if not ctx.build or not changed:
        return None
    return b"".join(out) + msg.rest
