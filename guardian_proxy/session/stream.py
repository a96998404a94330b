"""De-masking of responses: whole JSON bodies and streams (SSE for OpenAI/Anthropic, NDJSON for Ollama).

`StreamDemasker` is the callable mitmproxy calls with each chunk of a streamed body (and with b"" at the
end). It decodes a compressed stream incrementally (gzip, deflate, br, zstd; the response then goes to the
client uncompressed), frames whole events, replaces surrogates in each text delta through a `Channel`
(so a surrogate split across chunks is still found), and flushes held-back text as a synthetic delta event
just before the event that closes its channel. Stated rules:

- events that are not JSON (comments, keep-alives, `[DONE]`, unknown payloads) pass byte for byte;
- an event longer than 1 MiB, or a body that stops decoding, ends de-masking for that stream: held text
  is flushed and the rest passes unchanged (a body that cannot be decoded is passed as received);
- decoding is bounded (`_Decoder`): a received chunk that decodes past 8 MiB, or a stream past 256 MiB, ends
  the stream after what decoded within the bound (held text flushed, a partial event dropped; the client was
  promised an uncompressed stream, so the compressed rest cannot follow);
- an interrupted stream flushes held text and then the partial event as received;
- reasoning/thinking content is never changed (providers sign it and clients send it back).
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Callable

from .. import chatapi
from ..chatapi.sse import Event, MessageFramer, SSEFramer
from .demask import Channel, Demasker

log = logging.getLogger("guardian_proxy")
JSON_TEXT_KEYS = frozenset({"arguments", "partial_json"})


def _signed(d: dict) -> bool:
    t = d.get("type")
    return isinstance(t, str) and ("reasoning" in t or "thinking" in t or "signature" in t)


#: objects the model fills with the user's data (tool-call arguments): their keys are the tool's, not the API's,
#: so a `name` or `id` in them is de-masked like any other string
FREE_KEYS = frozenset({"args", "input", "parameters", "arguments", "partialArgs", "response"})


def demask_json(obj, dm: Demasker, depth: int = 0, free: bool = False) -> int:
    """De-mask every string of a parsed JSON value in place (identifiers and signed reasoning left
    alone, except inside tool-call arguments); returns how many strings changed."""
    if depth > 64 or not dm:
        return 0
    n = 0
    if isinstance(obj, dict):
        if _signed(obj) and not free:
            return 0
        for k, v in obj.items():
            if k in chatapi.SKIP_KEYS and not free:
                continue
            if isinstance(v, str):
                new = dm.full(v, json_text=k in JSON_TEXT_KEYS)
                if new != v:
                    obj[k], n = new, n + 1
            elif (real := dm.age(k, v)) is not None:  # a tool call's `"age": 39`: the person's own age back
                obj[k], n = real, n + 1
            else:
                n += demask_json(v, dm, depth + 1, free or k in FREE_KEYS)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, str):
                new = dm.full(v)
                if new != v:
                    obj[i], n = new, n + 1
            else:
                n += demask_json(v, dm, depth + 1, free)
    return n


#: bounds on decoding a compressed chat stream (docs/security.md): the decoded bytes one
#: received chunk may give (`limits.max_decoded_bytes`' default) and those of the whole stream
DECODED_CHUNK_LIMIT = 8 * 1024 * 1024
DECODED_STREAM_LIMIT = 256 * 1024 * 1024
_STEP = 64 * 1024  # output asked of the decompressor per call
_ZSTD_PIECE = 128  # input fed to zstd per call (it has no output bound: one piece gives at most a few MB)


class _Over(Exception):
    def __init__(self, out: bytearray):
        self.out = out


class _Decoder:
    """Incremental decoding of a compressed stream, bounded: one received chunk decodes to at most `limit` bytes
    and the whole stream to at most `total`. Past either, `feed` gives the output up to the bound, sets `over`
    and decodes nothing more; no more than about one step beyond the bound is ever decompressed (a gzip bomb
    never expands in memory)."""

    def __init__(self, coding: str, limit: int = DECODED_CHUNK_LIMIT, total: int = DECODED_STREAM_LIMIT):
        self.coding, self.limit, self.total = coding, limit, total
        self.decoded = 0
        self.over = False
        if coding in ("gzip", "x-gzip"):
            self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            self._d = zlib.decompressobj()
        elif coding == "br":
            import brotlicffi

            self._d = brotlicffi.Decompressor()
        elif coding == "zstd":
            import zstandard

            self._d = zstandard.ZstdDecompressor().decompressobj()
        else:
            raise ValueError(coding)
        self._first = True

    def feed(self, data: bytes) -> bytes:
        if self.over:
            return b""
        try:
            out = self._decode(data)
        except _Over as o:
            self.over, out = True, o.out
            del out[max(0, min(self.limit, self.total - self.decoded)):]
        self.decoded += len(out)
        return bytes(out)

    def _check(self, out: bytearray) -> None:
        if len(out) > self.limit or self.decoded + len(out) > self.total:
            raise _Over(out)

    def _decode(self, data: bytes) -> bytearray:
        if self.coding == "br":
            return self._brotli(data)
        if self.coding == "zstd":
            out = bytearray()
            for i in range(0, len(data), _ZSTD_PIECE):
                out += self._d.decompress(data[i:i + _ZSTD_PIECE])
                self._check(out)
            return out
        if self.coding == "deflate" and self._first and data:
            self._first = False
            try:
                return self._inflate(data)
            except zlib.error:  # raw deflate, as some servers send
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._inflate(data)

    def _inflate(self, data: bytes) -> bytearray:
        out, buf = bytearray(), data
        while True:  # until the input is used up and no output is pending
            piece = self._d.decompress(buf, _STEP)
            out += piece
            self._check(out)
            buf = self._d.unconsumed_tail
            if self._d.eof or (not buf and len(piece) < _STEP):
                return out

    def _brotli(self, data: bytes) -> bytearray:
        out = bytearray(self._d.process(data, output_buffer_limit=_STEP))
        while not (self._d.is_finished() or self._d.can_accept_more_data()):  # more output pending
            self._check(out)
            out += self._d.process(b"", output_buffer_limit=_STEP)
        self._check(out)
        return out


DECODABLE = ("gzip", "x-gzip", "deflate", "br", "zstd")


class StreamDemasker:
    """`framer` cuts the (decoded) bytes into events and writes changed ones back in the stream's own framing
    (SSE, NDJSON, AWS event-stream, length-prefixed frames); the dialect names their text deltas."""

    def __init__(self, kind: str, dm: Demasker, framer=None, coding: str | None = None,
                 on_alias: Callable[[str], None] | None = None, limit: int = DECODED_CHUNK_LIMIT,
                 total: int = DECODED_STREAM_LIMIT):
        self.kind = kind
        self.dialect = chatapi.dialects.get(kind)
        self.dm = dm
        self.framer = framer if framer is not None else SSEFramer()
        self.decoder = _Decoder(coding, limit, total) if coding else None
        self.on_alias = on_alias
        self.channels: dict[tuple, Channel] = {}
        self.templates: dict[tuple, object] = {}
        self.passthrough = False
        self.dead = False  # the compressed body stopped decoding: nothing more is emitted

    @property
    def decodes(self) -> bool:
        """True when the stream arrives compressed and leaves uncompressed (drop Content-Encoding)."""
        return self.decoder is not None

    def __call__(self, data: bytes) -> bytes:
        if self.dead:
            return b""
        end = data == b""  # the end of the body (a compressed chunk may also decode to nothing)
        if self.decoder is not None and data:
            try:
                data = self.decoder.feed(data)
            except Exception as e:  # the body stops decoding: end at the last whole event
                log.warning("guardian: a %s stream stopped decoding (%s); ended there", self.kind, type(e).__name__)
                self.dead = True
                return b"" if self.passthrough else self._flush_all(None)
        pending = bytes(self.framer.buf)
        try:
            out = self._chunk(data, end)
        except Exception as e:  # never break the client's stream: flush what is held, pass the rest as is
            log.warning("guardian: de-masking stopped for a %s stream (%s)", self.kind, type(e).__name__)
            self.framer.rest()
            self.passthrough = True
            return self._flush_all(None) + pending + data
        if self.decoder is not None and self.decoder.over:  # decodes past its bound: ends after its last whole event
            log.warning("guardian: a %s stream decodes past its bound (a compression bomb?); ended there", self.kind)
            self.dead = True
            if not self.passthrough:
                out += self._flush_all(None)
        return out

    def _chunk(self, data: bytes, end: bool) -> bytes:
        if self.passthrough:
            return data
        out = bytearray()
        for ev in self.framer.feed(data):
            out += self._event(ev)
        if self.framer.overflow:
            out += self._flush_all(None) + self.framer.rest()
            self.passthrough = True
        if end:
            rest = self.framer.rest()
            out += self._flush_all(None)
            out += rest
        return bytes(out)

    # ------------------------------------------------------------------ events

    def _event(self, ev: Event) -> bytes:
        return b"".join(self._event_parts(ev))

    def _event_parts(self, ev: Event) -> list[bytes]:
        """The event, written back (changed or as received), preceded by the synthetic deltas that flush the
        channels it closes: one item per event."""
        obj = ev.obj
        if obj is None:
            return [ev.raw]
        pre: list[bytes] = []
        closes = self.dialect.closes(ev.name, obj) or []
        deltas = self.dialect.deltas(ev.name, obj) if obj != "[DONE]" else []
        # a channel this event both continues and closes (the last text piece in the finishing chunk, as Gemini
        # and some OpenAI-compatible servers send it) releases its held text inside this event's own delta
        last = {d.channel for d in deltas if any(d.channel[: len(p)] == p for p in closes)}
        for prefix in closes:
            pre += self._flush(prefix, obj, keep=last)
        if obj == "[DONE]":
            return pre + [ev.raw]
        changed = False
        for d in deltas:
            ch = self.channels.get(d.channel)
            if ch is None:
                ch = self.channels[d.channel] = self.dm.channel(d.json_text)
            self.templates[d.channel] = obj
            old = d.holder[d.key]
            new = ch.feed(old)
            if d.channel in last:
                new += ch.flush()
                self.channels.pop(d.channel, None)
            if new != old:
                d.holder[d.key] = new
                changed = True
        if not deltas:
            changed = demask_json(obj, self.dm) > 0
        if self.on_alias is not None:
            for alias in self.dialect.aliases(obj):
                self.on_alias(alias)
        if not changed:
            return pre + [ev.raw]
        return pre + [self._encode(ev.name, obj, ev)]

    def message(self, content: bytes) -> list[bytes]:
        """One server→client WebSocket message (one event): the messages to deliver in its place, in order
        (synthetic deltas flushing held-back text first); [] when the whole message is held back. A message
        that is not JSON, or a de-masking error, passes as received."""
        if self.passthrough:
            return [content]
        try:
            ev = Event(raw=content, obj=json.loads(content))
        except (ValueError, UnicodeDecodeError):
            return self._packed(content)
        try:
            return [m for m in self._event_parts(ev) if m]
        except Exception as e:
            log.warning("guardian: de-masking stopped for a %s WebSocket (%s)", self.kind, type(e).__name__)
            self.passthrough = True
            return self._flush((), None) + [content]

    def _packed(self, content: bytes) -> list[bytes]:
        """A message that packs several JSON events (Copilot; SignalR-style \x1e separators): each is an
        event, and they leave together as one message with the same separator."""
        from ..chatapi.frames import split_json_values

        values = split_json_values(content)
        if not values or len(values) < 2:
            return [content]
        sep = b"\x1e" if b"\x1e" in content else b"\n"
        try:
            parts = [p for v in values for p in self._event_parts(Event(raw=self.framer.encode(None, None, v), obj=v))]
        except Exception as e:
            log.warning("guardian: de-masking stopped for a %s WebSocket (%s)", self.kind, type(e).__name__)
            self.passthrough = True
            return self._flush((), None) + [content]
        tail = sep if content.rstrip(b" \t\r\n").endswith(sep) else b""
        return [sep.join(p for p in parts if p) + tail]

    def _encode(self, name: str | None, obj, ev: Event | None = None) -> bytes:
        return self.framer.encode(ev, name, obj)

    def _flush(self, prefix: tuple, template, keep: set | frozenset = frozenset()) -> list[bytes]:
        out: list[bytes] = []
        for key in [k for k in self.channels if k[: len(prefix)] == prefix and k not in keep]:
            ch = self.channels.pop(key)
            text = ch.flush()
            if text:
                tpl = template if isinstance(template, dict) else self.templates.get(key)
                name, obj = self.dialect.synth(tpl, key, text, ch.json_text)
                out.append(self._encode(name, obj))
        return out

    def _flush_all(self, template) -> bytes:
        return b"".join(self._flush((), template))


def demask_body(kind: str, body: bytes, dm: Demasker, on_alias: Callable[[str], None] | None = None) -> bytes | None:
    """A whole JSON response de-masked; None when it is not JSON or nothing changed. An array of the dialect's
    stream events (Gemini's streamGenerateContent without `alt=sse`) is the stream it was sent as: its items go
    through a `StreamDemasker` as events, so a surrogate split across two of them is still found."""
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    dialect = chatapi.dialects.get(kind)
    if isinstance(obj, list) and any(dialect.deltas(None, item) for item in obj if isinstance(item, dict)):
        return _demask_events(kind, obj, dm, on_alias)
    if on_alias is not None:
        for alias in dialect.aliases(obj):
            on_alias(alias)
    if demask_json(obj, dm) == 0:
        return None
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def _demask_events(kind: str, items: list, dm: Demasker, on_alias: Callable[[str], None] | None) -> bytes | None:
    """A JSON array of stream events, de-masked event by event (held text flushed as synthetic events at the
    end, as a stream's end does); None when nothing changed."""
    before = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    sd = StreamDemasker(kind, dm, MessageFramer(), None, on_alias)
    out: list[bytes] = []
    for item in items:
        out += sd.message(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode())
    if not sd.passthrough:
        out += sd._flush((), None)
    after = "[" + ",".join(m.decode() for m in out) + "]"
    return after.encode() if after != before else None
