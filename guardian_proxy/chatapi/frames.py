"""Length-prefixed frames: Google's chunked `rt=c` replies (Gemini web's StreamGenerate, batchexecute).

A reply is the anti-XSSI line `)]}'`, a blank line, then frames `<length>\\n<json>\\n`. What the length
counts was taken from two independent sources and one capture:

- the open-source Python client `gemini_webapi` (HanaokaYuzu/Gemini-API, `utils/parsing.py`) reads the
  count starting right after the digits and in UTF-16 code units ("JavaScript .length"), its comment
  saying it includes the newline after the number and the newline after the JSON;
- a captured 216-byte Gemini reply kept as a test fixture in another client
  (`)]}'\\n\\n122\\n[…120 chars…]\\n56\\n[…54…]\\n25\\n[["e",4,null,null,216]]\\n`): every count is the JSON's
  length + 2 (both newlines), and the last frame's fifth field is the length of the whole reply;
- notebooklm-py (teng-lin) reports that live counts do not match UTF-8 byte lengths on non-ASCII text.

So: the count is the UTF-16 length of everything between the digits and the next frame's digits
("\\n" + JSON + "\\n"). The framer below counts UTF-16 units on the UTF-8 bytes without decoding (a
4-byte sequence is two units), and waits while a frame is incomplete, also in the middle of a character.

`GoogleFramer` has the interface of `chatapi.sse`'s framers (`feed` → events, `rest`, `overflow`,
`encode`). An event's `obj` is the frame's outer JSON, in which the inner JSON string of every
`["wrb.fr", id, "<json>", …]` entry is replaced by its parsed value, so `demask_json` de-masks the texts
inside it; `encode` writes a changed frame back with both JSON levels re-encoded in the style of the
original (compact, non-ASCII as is, and Google's `\\u003d`-style escapes where the original had them) and
its length recomputed. The closing `["e", n, null, null, total]` frame's total is recomputed when it
equalled the reply's length so far (uncertain: whether a client checks it; it only changes when an
earlier frame did). A frame whose JSON does not parse passes byte for byte; a reply that stops being
frames (no digits where a length should be, a count that splits a character) passes through from there.

Also here: `JSONStyle`, which re-encodes a JSON value the way the text it was parsed from was written
(used by the request side of the dialects, so a message nothing was changed in is written back byte for
byte), and `split_json_values` for WebSocket messages that pack several JSON values.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .sse import Event, _Framer

XSSI = b")]}'"
_WS = b" \t\r\n"
_DIGITS = b"0123456789"
_CONT = bytes(range(0x80, 0xC0))  # UTF-8 continuation bytes: no UTF-16 unit of their own
_FOUR = bytes(range(0xF0, 0xF8))  # lead bytes of 4-byte sequences: two UTF-16 units
_MAX_DIGITS = 10


def utf16_units(b: bytes) -> int:
    """UTF-16 code units of UTF-8 bytes (not validated)."""
    n = len(b)
    return n - (n - len(b.translate(None, _CONT))) + (n - len(b.translate(None, _FOUR)))


def utf16_len(s: str) -> int:
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)


# ---------------------------------------------------------------------------------------------- JSON style

_ESCAPABLE = "<>&='/"
_NON_ASCII_ESCAPE = re.compile(r"\\u(?!00[0-7][0-9a-fA-F])[0-9a-fA-F]{4}")


@dataclass(frozen=True)
class JSONStyle:
    """How a JSON text was written: separators, non-ASCII escaped or not, and the extra characters some
    servers escape inside strings (Google's `\\u003d`, PHP's `\\/`)."""

    ascii: bool = False
    item_sep: str = ","
    key_sep: str = ":"
    escapes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, text: str) -> JSONStyle:
        item, key = ",", ":"
        seen_item = seen_key = False
        in_str = esc = False
        for i, c in enumerate(text):  # the first separators outside strings tell the spacing
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == '"':
                    in_str = False
                continue
            if c == '"':
                in_str = True
            elif c in ",:" and ((c == "," and not seen_item) or (c == ":" and not seen_key)):
                spaced = text[i + 1:i + 2] == " "
                if c == ",":
                    item, seen_item = (", " if spaced else ","), True
                else:
                    key, seen_key = (": " if spaced else ":"), True
                if seen_item and seen_key:
                    break
        escapes = []
        for ch in _ESCAPABLE:
            if (ch != "/" and ch in text) or (ch == "/" and re.search(r"(?<!\\)/", text)):
                continue  # written as is somewhere: not escaped
            for form in ((f"\\u{ord(ch):04x}", f"\\u{ord(ch):04X}") if ch != "/" else ("\\/",)):
                if form in text:
                    escapes.append((ch, form))
                    break
        return cls(text.isascii() and _NON_ASCII_ESCAPE.search(text) is not None, item, key, tuple(escapes))

    def dumps(self, value) -> str:
        out = json.dumps(value, ensure_ascii=self.ascii, separators=(self.item_sep, self.key_sep))
        for ch, form in self.escapes:  # these characters only occur inside strings in JSON text
            out = out.replace(ch, form)
        return out


COMPACT = JSONStyle()


def split_json_values(data: bytes | str) -> list | None:
    """The JSON values one WebSocket message packs one after the other (whitespace or \\x1e between them),
    or None when it is not such a sequence. Microsoft Copilot was seen packing several events in one
    message (open-source clients split them the same way)."""
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            return None
    dec, out, i, n = json.JSONDecoder(), [], 0, len(data)
    while True:
        while i < n and data[i] in " \t\r\n\x1e":
            i += 1
        if i >= n:
            break
        try:
            value, i = dec.raw_decode(data, i)
        except ValueError:
            return None
        out.append(value)
    return out or None


# ---------------------------------------------------------------------------------------------- frames


class Frame(Event):
    """One length-prefixed frame. `obj`: the outer JSON with the inner JSON strings of `wrb.fr` entries
    parsed (their indexes in `inner`); `raw`: the bytes as received (for the closing `e` frame: with its
    total recomputed, when earlier frames were rewritten)."""

    def __init__(self, raw: bytes, lead: str = "", pre: str = "", post: str = "", data: str | None = None):
        self._fix = None
        super().__init__(raw=raw, data=data)
        self.lead, self.pre, self.post = lead, pre, post
        self.inner: dict[int, str] = {}  # index in obj → the inner JSON text as received

    @property
    def raw(self) -> bytes:  # type: ignore[override]
        return self._raw if self._fix is None else self._fix()

    @raw.setter
    def raw(self, value: bytes) -> None:
        self._raw = value

    def text(self, obj) -> str:
        """The frame's JSON text for `obj` (the inner levels re-encoded in their own style)."""
        outer = obj
        if self.inner and isinstance(obj, list):
            outer = list(obj)
            for i, orig in self.inner.items():
                item = obj[i]
                if isinstance(item, list) and len(item) > 2:
                    item = list(item)
                    item[2] = JSONStyle.of(orig).dumps(item[2])
                    outer[i] = item
        return JSONStyle.of(self.data or "").dumps(outer)

    def build(self, json_text: str) -> bytes:
        body = self.pre + json_text + self.post
        return f"{self.lead}{utf16_len(body)}{body}".encode()


def _decode_inner(obj) -> dict[int, str]:
    """Parse, in place, the inner JSON strings of `["wrb.fr", id, "<json>", …]` entries."""
    found: dict[int, str] = {}
    if not isinstance(obj, list):
        return found
    for i, item in enumerate(obj):
        if isinstance(item, list) and len(item) > 2 and item[0] == "wrb.fr" and isinstance(item[2], str):
            s = item[2]
            if s[:1] not in ("[", "{"):
                continue
            try:
                value = json.loads(s)
            except ValueError:
                continue
            item[2] = value
            found[i] = s
    return found


class GoogleFramer(_Framer):
    """Bytes in, whole frames out; see the module docstring."""

    def __init__(self):
        super().__init__()
        self.started = False  # past the anti-XSSI prefix (or sure there is none)
        self.in_units = self.in_bytes = 0  # what was received so far, in events handed out
        self.d_units = self.d_bytes = 0  # what rewriting added (may be negative)

    def _count(self, raw: bytes) -> None:
        self.in_units += utf16_units(raw)
        self.in_bytes += len(raw)

    def feed(self, data: bytes) -> list[Event]:
        self.buf += data
        out: list[Event] = []
        buf, pos, n = self.buf, 0, len(self.buf)
        while pos < n and not self.overflow:
            if not self.started:
                head = bytes(buf[pos:pos + len(XSSI)])
                if XSSI.startswith(head) and len(head) < len(XSSI):
                    break  # may still become the prefix
                self.started = True
                if head == XSSI:
                    ev = Event(raw=XSSI)
                    self._count(XSSI)
                    out.append(ev)
                    pos += len(XSSI)
                    continue
            ev, end = self._frame(buf, pos, n)
            if ev is None:
                break
            out.append(ev)
            pos = end
        del self.buf[:pos]
        self._check_overflow()
        return out

    def _frame(self, buf: bytearray, pos: int, n: int) -> tuple[Frame | None, int]:
        d = pos
        while d < n and buf[d] in _WS:
            d += 1
        s = d
        while s < n and buf[s] in _DIGITS:
            s += 1
        if s == n:
            if s - d > _MAX_DIGITS:
                self.overflow = True
            return None, pos  # whitespace or digits so far: wait
        if s == d or s - d > _MAX_DIGITS:
            self.overflow = True  # not a frame: the rest passes as received
            return None, pos
        length = int(buf[d:s])
        if n - s < length:
            return None, pos  # at least one byte per unit
        e, units = s + length, utf16_units(bytes(buf[s:s + length]))
        while units < length:
            step = length - units
            if e + step > n:
                return None, pos
            units += utf16_units(bytes(buf[e:e + step]))
            e += step
        if units > length:
            self.overflow = True  # the count splits a surrogate pair: not Google's framing
            return None, pos
        p = e - 1  # the last counted character may still need its continuation bytes
        while p > s and buf[p] in _CONT:
            p -= 1
        lead = buf[p]
        need = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if p + need > n:
            return None, pos
        e = max(e, p + need)
        raw = bytes(buf[pos:e])
        try:
            body = raw[s - pos:].decode("utf-8")
        except UnicodeDecodeError:
            self.overflow = True
            return None, pos
        stripped = body.strip()
        i = body.find(stripped) if stripped else len(body)
        ev = Frame(raw, raw[:d - pos].decode("ascii"), body[:i], body[i + len(stripped):], stripped)
        self._count(raw)
        try:
            ev.obj = json.loads(stripped) if stripped else None
        except ValueError:
            ev.obj = None
        if ev.obj is not None:
            ev.inner = _decode_inner(ev.obj)
            self._closing(ev)
        return ev, e

    def _closing(self, ev: Frame) -> None:
        """`[["e", n, null, null, total]]`: total = the reply's length so far; recomputed lazily (when the
        event is written out, after every earlier frame was)."""
        o = ev.obj
        if not (isinstance(o, list) and len(o) == 1 and isinstance(o[0], list) and len(o[0]) >= 5
                and o[0][0] == "e" and type(o[0][4]) is int):
            return
        total = o[0][4]
        unit = "units" if total == self.in_units else "bytes" if total == self.in_bytes else None
        if unit is None:
            return
        orig = ev._raw

        def fix() -> bytes:
            delta = self.d_units if unit == "units" else self.d_bytes
            if not delta:
                return orig
            size = utf16_units if unit == "units" else len
            cand = total + delta
            new = orig
            for _ in range(4):  # the total's own digits may change the frame's length
                item = list(o[0])
                item[4] = cand
                new = ev.build(JSONStyle.of(ev.data or "").dumps([item]))
                got = total + delta + size(new) - size(orig)
                if got == cand:
                    break
                cand = got
            ev._fix = None  # computed once
            self._grew(orig, new)
            ev._raw = new
            return new

        ev._fix = fix

    def _grew(self, old: bytes, new: bytes) -> None:
        self.d_units += utf16_units(new) - utf16_units(old)
        self.d_bytes += len(new) - len(old)

    def encode(self, ev: Event | None, name: str | None, obj) -> bytes:
        if isinstance(ev, Frame):
            new = ev.build(ev.text(obj))
            self._grew(ev._raw, new)
            return new
        text = "\n" + COMPACT.dumps(obj) + "\n"  # a new frame (no Google dialect makes one today)
        new = f"{utf16_len(text)}{text}".encode()
        self._grew(b"", new)
        return new
