"""Framing of streamed chat responses: Server-Sent Events and NDJSON, bytes in → whole events out.

An event is kept with its original bytes; only an event whose data was changed is re-serialised
(`data:` lines joined into one, every other line — `event:`, `id:`, `retry:`, comments — kept in place),
so keep-alives, comments, `[DONE]` and anything unparseable pass through byte for byte.
Line terminators CRLF, LF and CR are all accepted (WHATWG EventSource).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_BOUNDARY = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r)")
_LINE = re.compile(r"\r\n|\n|\r")
MAX_EVENT_BYTES = 1 << 20  # an event that grows past this without ending is passed through raw


@dataclass
class Event:
    raw: bytes  # original bytes including the terminating blank line
    lines: list[str] = field(default_factory=list)
    name: str | None = None
    data: str | None = None  # data lines joined with "\n"; None when the event has no data field
    obj: object = None  # parsed JSON of data ("[DONE]" stays a string); None when not JSON

    def serialise(self, new_data: str) -> bytes:
        out, done = [], False
        for line in self.lines:
            fname = line.split(":", 1)[0] if not line.startswith(":") else ""
            if fname == "data":
                if not done:
                    out.append("data: " + new_data)
                    done = True
                continue
            out.append(line)
        if not done:
            out.append("data: " + new_data)
        return ("\n".join(out) + "\n\n").encode("utf-8")


def parse_event(raw: bytes) -> Event:
    ev = Event(raw=raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ev
    ev.lines = [ln for ln in _LINE.split(text) if ln != ""]
    data: list[str] = []
    for line in ev.lines:
        if line.startswith(":"):
            continue
        fname, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if fname == "data":
            data.append(value)
        elif fname == "event":
            ev.name = value
    if data:
        ev.data = "\n".join(data)
        if ev.data.strip() == "[DONE]":
            ev.obj = "[DONE]"
        else:
            try:
                ev.obj = json.loads(ev.data)
            except ValueError:
                ev.obj = None
    return ev


class _Framer:
    """Bytes in, whole events out (`feed`); `rest` hands back what never completed; `encode` writes an
    event whose data changed (`ev` given: its other lines kept) or a new one (`ev` None).

    Every framer of a chat reply (here, `eventstream`, `frames`) has these three methods and `overflow`."""

    def __init__(self):
        self.buf = bytearray()
        self.overflow = False  # an over-long event was seen: the caller passes the rest through

    def _check_overflow(self) -> None:
        if len(self.buf) > MAX_EVENT_BYTES:
            self.overflow = True

    def rest(self) -> bytes:
        out = bytes(self.buf)
        self.buf.clear()
        return out


class SSEFramer(_Framer):
    """Feed bytes, get whole events; a partial event waits for its blank line."""

    def feed(self, data: bytes) -> list[Event]:
        self.buf += data
        out: list[Event] = []
        pos = 0
        while True:
            m = _BOUNDARY.search(self.buf, pos)
            if m is None:
                break
            # "\r" at the very end may be the first half of "\r\n": wait for more bytes
            if m.end() == len(self.buf) and self.buf.endswith(b"\r"):
                break
            out.append(parse_event(bytes(self.buf[pos:m.end()])))
            pos = m.end()
        del self.buf[:pos]
        self._check_overflow()
        return out

    def encode(self, ev: Event | None, name: str | None, obj) -> bytes:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        if ev is not None:
            return ev.serialise(data)
        head = f"event: {name}\n" if name else ""
        return f"{head}data: {data}\n\n".encode()


class NDJSONFramer(_Framer):
    """Ollama's stream: one JSON object per line."""

    def feed(self, data: bytes) -> list[Event]:
        self.buf += data
        out: list[Event] = []
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                break
            raw = bytes(self.buf[: i + 1])
            del self.buf[: i + 1]
            out.append(parse_line(raw))
        self._check_overflow()
        return out

    def encode(self, ev: Event | None, name: str | None, obj) -> bytes:
        return ndjson_line(obj)


class MessageFramer(_Framer):
    """WebSocket messages: each message is one whole event (JSON), written back compact."""

    def feed(self, data: bytes) -> list[Event]:
        return [parse_line(data)] if data else []

    def encode(self, ev: Event | None, name: str | None, obj) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def parse_line(raw: bytes) -> Event:
    ev = Event(raw=raw)
    try:
        ev.data = raw.decode("utf-8").strip()
        ev.obj = json.loads(ev.data) if ev.data else None
    except ValueError:
        ev.obj = None
    return ev


def ndjson_line(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
