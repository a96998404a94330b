"""Content-Encoding decode/encode with a decompressed-size limit (decompression-bomb guard).

`decode` accepts the header value as sent (``gzip``, ``br``, ``deflate``, ``zstd``, ``identity``,
or a comma list applied in order) and raises `BodyTooLarge` past `limit` decoded bytes and
`BodyError` for an unknown or corrupt encoding. `encode` is its inverse, used when a rewritten
body goes back on the wire in the encoding the client chose.
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


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    d = zlib.decompressobj(wbits)
    out = bytearray()
    buf = data
    while buf:
        out += d.decompress(buf, _CHUNK)
        if len(out) > limit:
            raise BodyTooLarge(f"decoded body exceeds {limit} bytes")
        buf = d.unconsumed_tail
    out += d.flush()
    if len(out) > limit:
        raise BodyTooLarge(f"decoded body exceeds {limit} bytes")
    return bytes(out)


def _unbrotli(data: bytes, limit: int) -> bytes:
    """Brotli with the output buffer bounded per call (brotlicffi ≥ 1.2): a few hundred bytes that expand to
    gigabytes stop at `limit` instead of being inflated in one call first. A truncated body gives what was
    decoded, as before."""
    d = brotlicffi.Decompressor()
    out = bytearray(d.process(data, output_buffer_limit=_CHUNK))
    while not (d.is_finished() or d.can_accept_more_data()):  # more output pending
        if len(out) > limit:
            raise BodyTooLarge(f"decoded body exceeds {limit} bytes")
        out += d.process(b"", output_buffer_limit=_CHUNK)
    if len(out) > limit:
        raise BodyTooLarge(f"decoded body exceeds {limit} bytes")
    return bytes(out)


def _one(data: bytes, coding: str, limit: int) -> bytes:
    try:
        if coding in ("gzip", "x-gzip"):
            return _inflate(data, 16 + zlib.MAX_WBITS, limit)
        if coding == "deflate":
            try:
                return _inflate(data, zlib.MAX_WBITS, limit)
            except zlib.error:
                return _inflate(data, -zlib.MAX_WBITS, limit)  # raw deflate, as some clients send
        if coding == "br":
            return _unbrotli(data, limit)
        if coding == "zstd":
            reader = zstandard.ZstdDecompressor().stream_reader(data)
            out = bytearray()
            while True:
                chunk = reader.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > limit:
                    raise BodyTooLarge(f"decoded body exceeds {limit} bytes")
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
