"""Content-Encoding decode/encode with a decompressed-size limit (decompression-bomb guard).

`decode` accepts the header value as sent (``gzip``, ``br``, ``deflate``, ``zstd``, ``identity``,
or a comma list applied in order) and raises `BodyTooLarge` past `limit` decoded bytes and
`BodyError` for an unknown or corrupt encoding. `encode` is its inverse, used when a rewritten
body goes back on the wire in the encoding the client chose.

`as_sent` puts a rewritten body back in the compression the client sent it in when no Content-Encoding header
said so (a body sniffed as gzip, zstd, zlib or brotli goes back compressed the same way, and byte for byte as
sent when the rewrite changed nothing).

`decode_head` is for a body over a limit: it gives the first `limit` decoded bytes of a body that is cut off
or that decodes past the limit (nothing past the limit is ever decompressed). `sniff_brotli` tries brotli,
which has no magic bytes, on a body that reads as binary: only a complete stream that decodes within the
limit counts.
"""

from __future__ import annotations

import zlib

import brotli
import brotlicffi
import zstandard

from .errors import BodyError, BodyTooLarge

_CHUNK = 64 * 1024


#: magic bytes of compressed data a client may send without a Content-Encoding header (PostHog's gzip-js,
#: Clarity): gzip, zstd, zlib at the common levels
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"\x78\x9c", "deflate"), (b"\x78\xda", "deflate"))


def sniff(data: bytes) -> str | None:
    """The compression a body's first bytes announce (None: none recognised)."""
    for magic, coding in _MAGIC:
        if data.startswith(magic):
            return coding
    return None


def _codings(header: str | None) -> list[str]:
    if not header:
        return []
    return [c.strip().lower() for c in header.split(",") if c.strip() and c.strip().lower() != "identity"]


def _over(out: bytearray, limit: int, head: bool) -> bool:
    """Past the limit: raise, or (head mode) tell the caller to stop and keep the first `limit` bytes."""
    if len(out) <= limit:
        return False
    if head:
        del out[limit:]
        return True
    raise BodyTooLarge(f"decoded body exceeds {limit} bytes")


def _inflate(data: bytes, wbits: int, limit: int, head: bool = False) -> bytes:
    d = zlib.decompressobj(wbits)
    out = bytearray()
    buf = data
    while buf:
        out += d.decompress(buf, _CHUNK)
        if _over(out, limit, head):
            return bytes(out)
        buf = d.unconsumed_tail
    out += d.flush()
    _over(out, limit, head)
    return bytes(out)


def _unbrotli(data: bytes, limit: int, head: bool = False, whole: bool = False) -> bytes:
    """Brotli with the output buffer bounded per call (brotlicffi ≥ 1.2): a few hundred bytes that expand to
    gigabytes stop at `limit` instead of being inflated in one call first. A truncated body gives what was
    decoded, as before (`whole`: raises BodyError unless the stream is complete)."""
    d = brotlicffi.Decompressor()
    out = bytearray(d.process(data, output_buffer_limit=_CHUNK))
    while not (d.is_finished() or d.can_accept_more_data()):  # more output pending
        if _over(out, limit, head):
            return bytes(out)
        out += d.process(b"", output_buffer_limit=_CHUNK)
    _over(out, limit, head)
    if whole and not d.is_finished():
        raise BodyError("incomplete brotli stream")
    return bytes(out)


def sniff_brotli(data: bytes, limit: int) -> bytes | None:
    """The decoded body if `data` is one complete brotli stream (None: it is not). Raises BodyTooLarge when it
    decodes past `limit`."""
    try:
        out = _unbrotli(data, limit, whole=True)
    except BodyTooLarge:
        raise
    except Exception:  # brotlicffi.error, BodyError: not brotli
        return None
    return out or None


def _one(data: bytes, coding: str, limit: int, head: bool = False) -> bytes:
    try:
        if coding in ("gzip", "x-gzip"):
            return _inflate(data, 16 + zlib.MAX_WBITS, limit, head)
        if coding == "deflate":
            try:
                return _inflate(data, zlib.MAX_WBITS, limit, head)
            except zlib.error:
                return _inflate(data, -zlib.MAX_WBITS, limit, head)  # raw deflate, as some clients send
        if coding == "br":
            return _unbrotli(data, limit, head)
        if coding == "zstd":
            reader = zstandard.ZstdDecompressor().stream_reader(data)
            out = bytearray()
            while True:
                try:
                    chunk = reader.read(_CHUNK)
                except zstandard.ZstdError:
                    if head and out:  # cut off: what was decoded
                        return bytes(out)
                    raise
                if not chunk:
                    break
                out += chunk
                if _over(out, limit, head):
                    break
            return bytes(out)
    except BodyTooLarge:
        raise
    except Exception as e:  # zlib.error, brotlicffi.error, zstandard.ZstdError
        raise BodyError(f"corrupt {coding} body: {e}") from e
    raise BodyError(f"unknown Content-Encoding {coding!r}")


def decode(data: bytes, content_encoding: str | None, limit: int) -> bytes:
    for coding in reversed(_codings(content_encoding)):
        data = _one(data, coding, limit)
    if len(data) > limit:
        raise BodyTooLarge(f"body exceeds {limit} bytes")
    return data


def decode_head(data: bytes, content_encoding: str | None, limit: int) -> bytes:
    """The first `limit` bytes of the decoded body; `data` may be cut off. Raises BodyError when it does not
    decode at all."""
    for coding in reversed(_codings(content_encoding)):
        data = _one(data, coding, limit, head=True)
    return data[:limit]


def encode(data: bytes, content_encoding: str | None) -> bytes:
    for coding in _codings(content_encoding):
        if coding in ("gzip", "x-gzip"):
            c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            data = c.compress(data) + c.flush()
        elif coding == "deflate":
            data = zlib.compress(data)
        elif coding == "br":
            data = brotli.compress(data)
        elif coding == "zstd":
            data = zstandard.ZstdCompressor().compress(data)
        else:
            raise BodyError(f"unknown Content-Encoding {coding!r}")
    return data


def _is_text(data: bytes) -> bool:
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start >= 4090  # a sequence cut at the sample's end
    return True


def as_sent(original: bytes | None, content_encoding: str | None, new: bytes, limit: int) -> bytes:
    """`new` (a rewritten body) in the compression `original` was sent in. With a Content-Encoding header the
    writers already encoded `new` as it says: returned as is. Without one, a body whose bytes announced a
    compression (magic bytes; brotli: a complete stream) was read decompressed; `new` goes back compressed the
    same way, or as `original` byte for byte when it decodes to the same body."""
    if content_encoding and _codings(content_encoding) or not original or new == original:
        return new
    coding = sniff(original)
    try:
        if coding is not None:
            decoded = decode(original, coding, limit)
        elif not _is_text(original):
            decoded, coding = sniff_brotli(original, limit), "br"
            if decoded is None:
                return new
        else:
            return new
    except (BodyError, BodyTooLarge):
        return new  # magic bytes by chance: the body was read as it was
    plain = new
    if coding == "br":
        again = sniff_brotli(new, limit) if not _is_text(new) else None
        plain = again if again is not None else new
    elif sniff(new) == coding:
        try:
            plain = decode(new, coding, limit)
        except (BodyError, BodyTooLarge):
            plain = new
    if plain == decoded:
        return original
    return new if plain is not new else encode(new, coding)
