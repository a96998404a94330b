"""Request bodies, query strings and cookies → text fields with paths, and the way back.

Paths name where a text sits so a rewrite can put it back in the same format. Body paths always
start with ``json:``, ``form:`` or ``text:`` (`is_body_path`); ``>`` steps into a document embedded in
a string:

    json:$.user.email        json:$.items[0]['first name']      json:$[3].event (NDJSON line 3)
    json:$.query>gql:0       (GraphQL literal)                  json:$.props>$.email (JSON in a string)
    json:@2                  (3rd value literal of JSON that does not parse: spliced back in place)
    form:q  form:tag#1       (urlencoded and multipart text parts)  form:en@2 (batched beacon line 2)
    form:avatar>filename     (multipart file name)                  form:data>b64:$.distinct_id
    text:                    query:uid    cookie:sid    path: (the URL path, raw)
    query:#1 (a query part sent without a key)               proto:1.3 (protobuf field 3 in field 1)

What a body really is wins over what it is declared to be: compression is sniffed by its magic bytes (and
brotli, which has none, is tried on a body that reads as binary), UTF-16 without a charset by its byte-order
mark or zero bytes, and a body declared as an image, font or octet stream that does not start with a media
format's magic bytes but reads as text is read as the JSON, form or text it is (flag
``content_type_mismatch``). A body over the limits is read up to them (format ``too_large``, fields of the
first part; the rest is written back byte for byte, or not at all when it was compressed).

`parse_body` never raises: a body it cannot read comes back with format ``unparsed``/``binary``/
``too_large`` and flags saying why. `write_back` rebuilds the decoded body with replacement texts in
the same format (JSON stays JSON of the same shape, forms keep their other bytes, multipart keeps its
boundary and part headers).
"""

from __future__ import annotations

import logging
import re
from itertools import islice

from .. import codec
from ..errors import BodyError, BodyTooLarge
from ..types import TextField
from . import embedded, jsondoc, multipart, pairs, protobuf
from .jsonpath import json_path, parse_json_path
from .model import _SURROGATE, BodyLimits, Ctx, DupObj, FilePart, ParsedBody

log = logging.getLogger("guardian_proxy")

BODY_PREFIXES = ("json", "form", "text", "proto")
_JSON_TYPES = ("application/json", "text/json", "application/csp-report", "application/reports+json",
               "application/vnd.api+json")
_LINES_TYPES = ("application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
                "application/json-seq", "application/jsonlines")
_BINARY = ("image/", "audio/", "video/", "font/", "application/octet-stream", "application/protobuf",
           "application/x-protobuf", "application/grpc", "application/zip", "application/pdf", "application/wasm",
           "application/x-tar", "application/gzip", "application/vnd.google.protobuf")
_CHARSET = re.compile(r"charset=\"?([\w\-]+)", re.I)
_BOUNDARY = re.compile(r"boundary=(\"[^\"]{1,200}\"|[^;\s]{1,200})", re.I)
_CTRL = re.compile(r"[\x00-\x08\x0e-\x1d\x1f]")  # \x1e is JSON-seq's record separator
#: the first bytes of media formats: a body that starts with one is what it says (never sniffed as text)
_MEDIA_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"%PDF-", b"wOF2", b"wOFF",
                b"PK\x03\x04", b"PK\x05\x06", b"\x00asm", b"\x00\x00\x01\x00", b"OggS", b"ID3", b"fLaC",
                b"\x1aE\xdf\xa3", b"OTTO", b"\x00\x01\x00\x00", b"BM", b"II*\x00", b"MM\x00*", b"7z\xbc\xaf",
                b"\x1f\x8b", b"\x28\xb5\x2f\xfd")


def is_body_path(path: str) -> bool:
    return path.split(":", 1)[0] in BODY_PREFIXES


# --------------------------------------------------------------------------- parse


def parse_body(body: bytes, content_type: str | None, content_encoding: str | None, limits: BodyLimits) -> ParsedBody:
    try:
        return _parse(body, content_type or "", content_encoding, limits)
    except Exception as e:  # the stage never raises on bad input
        log.debug("body parse failed: %s", e)
        return ParsedBody(format="unparsed", flags=["unparsed", "parse_error"], decoded=body, limits=limits)


def _parse(body: bytes, content_type: str, content_encoding: str | None, limits: BodyLimits) -> ParsedBody:
    if not body:
        return ParsedBody(format="none", decoded=b"", limits=limits)
    if len(body) > limits.max_body_bytes:
        return _over_limit(body, content_type, content_encoding, limits, ["too_large"])
    sniffed = codec.sniff(body) if not content_encoding else None
    try:
        decoded = codec.decode(body, content_encoding or sniffed, limits.max_decoded_bytes)
    except BodyTooLarge:
        return _over_limit(body, content_type, content_encoding, limits, ["too_large", "decompression_limit"])
    except BodyError:
        if not sniffed:
            return ParsedBody(format="unparsed", flags=["unparsed", "bad_encoding"], limits=limits)
        decoded, sniffed = body, None  # magic bytes by chance: read it as it is
    return _read(decoded, content_type, limits, sniffed, bool(content_encoding))


def _read(decoded: bytes, content_type: str, limits: BodyLimits, sniffed: str | None,
          declared_coding: bool) -> ParsedBody:
    ctype = content_type.split(";")[0].strip().lower()
    m = _CHARSET.search(content_type)
    charset = m.group(1).lower() if m else "utf-8"
    pb = ParsedBody(format="unparsed", decoded=decoded, charset=charset, limits=limits, encoding=sniffed)
    if sniffed:
        pb.flags.append("sniffed")
    if ctype.startswith("multipart/"):
        return _multipart(pb, content_type)
    if ctype in protobuf.TYPES:
        pr = protobuf.parse(decoded, ctype, pb.flags, limits.max_decoded_bytes)
        if pr is not None:
            return _walk(pb, "protobuf", pr)
    utf16 = None if m else _utf16(decoded)
    if utf16:
        pb.bom = utf16[1]
        text, lossy, pb.charset = _text(decoded[len(pb.bom):], utf16[0])
    else:
        text, lossy, pb.charset = _text(decoded, charset)
    magic = decoded.startswith(_MEDIA_MAGIC)
    if text is None and not (sniffed or declared_coding or magic):
        try:
            br = codec.sniff_brotli(decoded, limits.max_decoded_bytes)  # brotli has no magic bytes
        except BodyTooLarge:
            return _over_limit(decoded, content_type, "br", limits, ["too_large", "decompression_limit", "sniffed"])
        inner = _read(br, content_type, limits, "br", False) if br else None
        if inner is not None and inner.format not in ("binary", "unparsed"):
            return inner
    binary = ctype.startswith(_BINARY) and not ctype.endswith("+xml")
    if text is None or (binary and (magic or (lossy and not _sniff_json(text)))):
        textual = ctype.startswith(("text/", "application/json", "application/x-www-form-urlencoded")) or not ctype
        bad_utf8 = text is None and _invalid_utf8(decoded, pb.charset)
        pb.format, pb.flags = ("unparsed", ["unparsed", "invalid_utf8"]) if textual and bad_utf8 \
            else ("binary", ["binary"])
        return pb
    if lossy:
        pb.lossy = True
        pb.flags.append("invalid_utf8")
    if binary:  # declared as media or bytes, but reads as text: read it as what it is
        pb.flags.append("content_type_mismatch")
        if _sniff_json(text):
            return _json(pb, text, declared=False)
        return _form_or_text(pb, text)
    if ctype in _LINES_TYPES:
        return _lines(pb, text, "\x1e" if ctype == "application/json-seq" else "\n") or _lenient(pb, text)
    if ctype == "application/graphql":
        return _walk(pb, "graphql", ("gqltext", text))
    if ctype in _JSON_TYPES or ctype.endswith("+json"):
        return _json(pb, text, declared=True)
    if ctype == "application/x-www-form-urlencoded":
        if _sniff_json(text):
            pb.flags.append("content_type_mismatch")
            return _json(pb, text, declared=False)
        return _walk(pb, "form", pairs.split(text))
    if not ctype or ctype.startswith(("text/plain", "application/x-")) or ctype.startswith("application/"):
        if _sniff_json(text):
            if ctype:
                pb.flags.append("sniffed")
            return _json(pb, text, declared=False)
        if ctype and pairs.is_form_like(text):
            pb.flags.append("sniffed")
        return _form_or_text(pb, text)
    return _walk(pb, "text", ("text", text))


def _form_or_text(pb: ParsedBody, text: str) -> ParsedBody:
    """A body of undeclared structure: `k=v&…` lines (a form, or a batch of them), else plain text."""
    if not pairs.is_form_like(text):
        return _walk(pb, "text", ("text", text))
    doc = pairs.split_lines(text)
    if sum(p is not None for p in doc.pairs) > 1:
        pb.flags.append("batched")
    return _walk(pb, "form", doc)


def _over_limit(body: bytes, content_type: str, content_encoding: str | None, limits: BodyLimits,
                flags: list[str]) -> ParsedBody:
    """A body past max_body_bytes (or decoding past max_decoded_bytes): the first part is read, the flags say
    the rest was not. Uncompressed, the rest is kept to be written back as sent; compressed, it cannot be."""
    bare = ParsedBody(format="too_large", flags=list(flags), limits=limits)
    coding = content_encoding or codec.sniff(body)
    head = body[: limits.max_body_bytes]
    rest = None
    try:
        if coding:
            head = codec.decode_head(head, coding, limits.max_decoded_bytes)
        else:
            head = head[: _utf8_cut(head)]
            rest = body[len(head):]
    except BodyError:
        return bare
    inner = _read(head, content_type, limits, None, True)  # never brotli-sniffed: a cut stream
    if inner.format in ("binary", "none") or not (inner.fields or inner.files):
        return bare
    inner.flags = flags + [f for f in inner.flags if f not in flags]
    inner.format, inner.head, inner.rest, inner.decoded = "too_large", inner.decoded, rest, None
    return inner


def _utf8_cut(head: bytes) -> int:
    """The length of `head` without a UTF-8 sequence cut off at its end."""
    for i in range(1, min(4, len(head)) + 1):
        b = head[-i]
        if b < 0x80:
            return len(head)
        if b >= 0xC0:  # the lead byte of the last sequence
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return len(head) if need <= i else len(head) - i
    return len(head)


def _utf16(data: bytes) -> tuple[str, bytes] | None:
    """(codec, byte-order mark) of UTF-16 text sent without a charset: a BOM, or ASCII's zero bytes in every
    other place. The decoded start must look like text (JSON, mostly ASCII), not bytes that begin FF FE."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        enc, bom = ("utf-16-le" if data[:2] == b"\xff\xfe" else "utf-16-be"), data[:2]
    elif len(data) >= 4 and 0 in data[:2]:
        sample = data[:64] if len(data) >= 64 else data[: len(data) - len(data) % 2]
        lo, hi = sample[0::2], sample[1::2]
        if not hi.count(0) == len(hi) and not lo.count(0) == len(lo):
            return None
        enc, bom = ("utf-16-le" if hi.count(0) == len(hi) and 0 not in lo else
                    "utf-16-be" if lo.count(0) == len(lo) and 0 not in hi else ""), b""
        if not enc:
            return None
    else:
        return None
    try:
        start = data[len(bom): len(bom) + 512].decode(enc, "ignore")
    except LookupError:
        return None
    ascii_ = sum(ch.isascii() and (ch.isprintable() or ch in "\t\r\n") for ch in start)
    return (enc, bom) if start and ascii_ >= 0.6 * len(start) else None


def _text(decoded: bytes, charset: str) -> tuple[str | None, bool, str]:
    """(text, lossy, charset used): strict decode; mostly-valid UTF-8 decoded with surrogateescape
    (lossy, written back byte for byte); None for binary-looking data."""
    try:
        text = decoded.decode(charset)
        return (None if _CTRL.search(text[:4096]) else text), False, charset
    except LookupError:
        charset = "utf-8"
        try:
            text = decoded.decode(charset)
            return (None if _CTRL.search(text[:4096]) else text), False, charset
        except UnicodeDecodeError:
            pass
    except UnicodeDecodeError:
        if charset not in ("utf-8", "utf8"):
            return None, False, charset
    lossy = decoded.decode("utf-8", "surrogateescape")
    if _CTRL.search(lossy[:4096]):
        return None, False, "utf-8"
    cutoff = max(4, len(lossy) // 50)  # more undecodable bytes than this: binary (counting stops there)
    if sum(1 for _ in islice(_SURROGATE.finditer(lossy), cutoff + 1)) > cutoff:
        return None, False, "utf-8"
    return lossy, True, "utf-8"


def _invalid_utf8(decoded: bytes, charset: str) -> bool:
    try:
        decoded.decode(charset)
        return False
    except (UnicodeDecodeError, LookupError):
        return True


def _sniff_json(text: str) -> bool:
    s = text.strip()
    return len(s) >= 2 and s[0] in "{[" and s[-1] in "}]"


def _json(pb: ParsedBody, text: str, declared: bool) -> ParsedBody:
    try:
        data = jsondoc.loads(text)
    except RecursionError:
        pb.flags += ["unparsed", "depth_limit"]
        return pb
    except ValueError as e:
        if "Extra data" in str(e):
            lines = _lines(pb, text, "\n")
            if lines is not None:
                return lines
        if declared and pairs.is_form_like(text):
            pb.flags.append("content_type_mismatch")
            return _walk(pb, "form", pairs.split(text))
        pos = getattr(e, "pos", 0)
        if pos >= len(text.rstrip()) - 1 or "Unterminated string" in str(e):
            pb.flags.append("truncated")
        return _lenient(pb, text)
    fmt = "graphql" if _is_graphql(data) else "json"
    return _walk(pb, fmt, data)


def _is_graphql(data) -> bool:
    ops = data if isinstance(data, list) else [data]
    return bool(ops) and all(isinstance(o, dict) and isinstance(o.get("query"), str) for o in ops) and \
        embedded.detect(ops[0]["query"], "query") is not None


def _lines(pb: ParsedBody, text: str, sep: str) -> ParsedBody | None:
    doc = jsondoc.parse_lines(text, sep)
    if doc is None:
        return None
    pb.flags.append("batched")
    return _walk(pb, "ndjson", doc)


def _lenient(pb: ParsedBody, text: str) -> ParsedBody:
    for f in ("unparsed", "invalid_json"):
        if f not in pb.flags:
            pb.flags.append(f)
    return _walk(pb, "unparsed", jsondoc.scan(text))


def _multipart(pb: ParsedBody, content_type: str) -> ParsedBody:
    m = _BOUNDARY.search(content_type)
    mp = multipart.parse(pb.decoded, m.group(1).strip('"'), pb.charset, pb.flags) if m else None
    if mp is None:
        pb.flags += ["unparsed", "no_boundary"]
        return pb
    return _walk(pb, "multipart", mp)


def _walk(pb: ParsedBody, fmt: str, data) -> ParsedBody:
    ctx = Ctx(pb.limits, flags=pb.flags, lossy=pb.lossy)
    _visit(data, ctx)
    pb.format, pb.data, pb.fields, pb.files = fmt, data, ctx.fields, ctx.files
    if pb.files:
        pb.flags.append("file_upload")
    if "depth_limit" in pb.flags and "unparsed" not in pb.flags:
        pb.flags.append("unparsed")  # part of the document was not inspected
    return pb


def _visit(data, ctx: Ctx):
    if isinstance(data, multipart.Multipart):
        return multipart.visit(data, ctx)
    if isinstance(data, protobuf.Proto):
        return protobuf.visit(data, ctx)
    if isinstance(data, pairs.Pairs):
        return pairs.visit(data, ctx, "form:")
    if isinstance(data, pairs.FormLines):
        return pairs.visit_lines(data, ctx)
    if isinstance(data, jsondoc.Lines):
        return jsondoc.visit_lines(data, ctx)
    if isinstance(data, jsondoc.Lenient):
        return jsondoc.visit_lenient(data, ctx)
    if isinstance(data, tuple):  # ("text", s) or ("gqltext", s)
        new = ctx.leaf("text:", data[1], None, 0, gql=data[0] == "gqltext")
        return None if not ctx.build else (data[1] if new is None else new)
    return jsondoc.visit(data, ctx, "json:", 0)


# --------------------------------------------------------------------------- write back


def write_back(parsed: ParsedBody, replacements: dict[str, str]) -> bytes:
    """The decoded body with the given field texts replaced (paths not in the body are ignored).
    Raises BodyError when the body has no writable structure (binary, unreadable, too large and compressed).
    A too_large body is its first part rebuilt and the rest as sent."""
    mine = {p: t for p, t in replacements.items() if is_body_path(p)}
    if not mine:
        if parsed.decoded is None and parsed.format != "none":
            raise BodyError(f"no body to rebuild ({parsed.format})")  # never answer an unread body with b""
        return parsed.decoded or b""
    if parsed.data is None or (parsed.format == "too_large" and parsed.rest is None):
        raise BodyError(f"cannot write back into a {parsed.format} body")
    ctx = Ctx(parsed.limits, repl=mine, lossy=parsed.lossy)
    out = _visit(parsed.data, ctx)
    rest = parsed.rest or b""
    if not ctx.hits:
        return parsed.head + rest if parsed.head is not None else parsed.decoded or b""
    if isinstance(out, bytes):
        return out + rest
    errors = "surrogateescape" if parsed.lossy else "strict"
    try:
        return parsed.bom + out.encode(parsed.charset, errors) + rest
    except (UnicodeEncodeError, LookupError):
        return parsed.bom + out.encode(parsed.charset, "backslashreplace") + rest


# --------------------------------------------------------------------------- query strings and cookies


def parse_query(url: str) -> list[TextField]:
    return pairs.query_fields(url)


def parse_cookies(cookie_header: str | None) -> list[TextField]:
    return pairs.cookie_fields(cookie_header)


def rewrite_url(url: str, replacements: dict[str, str]) -> str:
    """The URL with ``query:`` values and the ``path:`` (the raw path as a whole) replaced."""
    url = pairs.rewrite_query(url, {p: t for p, t in replacements.items() if p.startswith("query:")})
    if "path:" in replacements:
        url = pairs.rewrite_path(url, replacements["path:"])
    return url


def rewrite_cookies(cookie_header: str, replacements: dict[str, str]) -> str:
    return pairs.rewrite_cookie_header(cookie_header, {p: t for p, t in replacements.items()
                                                       if p.startswith("cookie:")})


__all__ = ["BODY_PREFIXES", "BodyLimits", "DupObj", "FilePart", "ParsedBody", "is_body_path", "json_path",
           "parse_body", "parse_cookies", "parse_json_path", "parse_query", "rewrite_cookies", "rewrite_url",
           "write_back"]
