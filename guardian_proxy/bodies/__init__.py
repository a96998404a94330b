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
from . import embedded, jsondoc, multipart, pairs
from .jsonpath import json_path, parse_json_path
from .model import _SURROGATE, BodyLimits, Ctx, DupObj, FilePart, ParsedBody

log = logging.getLogger("guardian_proxy")

BODY_PREFIXES = ("json", "form", "text")
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
        return ParsedBody(format="too_large", flags=["too_large"], limits=limits)
    sniffed = codec.sniff(body) if not content_encoding else None
    try:
        decoded = codec.decode(body, content_encoding or sniffed, limits.max_decoded_bytes)
    except BodyTooLarge:
        return ParsedBody(format="too_large", flags=["too_large", "decompression_limit"], limits=limits)
    except BodyError:
        if not sniffed:
            return ParsedBody(format="unparsed", flags=["unparsed", "bad_encoding"], limits=limits)
        decoded, sniffed = body, None  # magic bytes by chance: read it as it is
    ctype = content_type.split(";")[0].strip().lower()
    m = _CHARSET.search(content_type)
    charset = m.group(1).lower() if m else "utf-8"
    pb = ParsedBody(format="unparsed", decoded=decoded, charset=charset, limits=limits, encoding=sniffed)
    if sniffed:
        pb.flags.append("sniffed")
    if ctype.startswith("multipart/"):
        return _multipart(pb, content_type)
    text, lossy, pb.charset = _text(decoded, charset)
    if text is None or (ctype.startswith(_BINARY) and not _sniff_json(text)):
        textual = ctype.startswith(("text/", "application/json", "application/x-www-form-urlencoded")) or not ctype
        bad_utf8 = text is None and _invalid_utf8(decoded, pb.charset)
        pb.format, pb.flags = ("unparsed", ["unparsed", "invalid_utf8"]) if textual and bad_utf8 \
            else ("binary", ["binary"])
        return pb
    if lossy:
        pb.lossy = True
        pb.flags.append("invalid_utf8")
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
    if not ctype or ctype.startswith(("text/plain", "application/octet-stream", "application/x-")) \
            or (ctype.startswith("application/") and not ctype.startswith(_BINARY)):
        if _sniff_json(text):
            if ctype:
                pb.flags.append("sniffed")
            return _json(pb, text, declared=False)
        if pairs.is_form_like(text):
            if ctype:
                pb.flags.append("sniffed")
            doc = pairs.split_lines(text)
            if sum(p is not None for p in doc.pairs) > 1:
                pb.flags.append("batched")
            return _walk(pb, "form", doc)
    return _walk(pb, "text", ("text", text))


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
    if isinstance(data, pairs.Pairs):
        return pairs.visit(data, ctx, "form:")
    if isinstance(data, pairs.FormLines):
        return pairs.visit_lines(data, ctx)
    if isinstance(data, jsondoc.Lines):
        return jsondoc.visit_lines(data, ctx)
    if isinstance(data, jsondoc.Lenient):
        return jsondoc.visit_lenient(data, ctx)
    if isinstance(data, tuple):  # ("text", s) or ("gqltext", s)
        new = ctx.leaf("text:", data[1], None, 0, embed=data[0] == "gqltext", gql=data[0] == "gqltext")
        return None if not ctx.build else (data[1] if new is None else new)
    return jsondoc.visit(data, ctx, "json:", 0)


# --------------------------------------------------------------------------- write back


def write_back(parsed: ParsedBody, replacements: dict[str, str]) -> bytes:
    """The decoded body with the given field texts replaced (paths not in the body are ignored).
    Raises BodyError when the body has no writable structure (binary, too large, unreadable)."""
    mine = {p: t for p, t in replacements.items() if is_body_path(p)}
    if not mine:
        if parsed.decoded is None and parsed.format != "none":
            raise BodyError(f"no body to rebuild ({parsed.format})")  # never answer an unread body with b""
        return parsed.decoded or b""
    if parsed.data is None:
        raise BodyError(f"cannot write back into a {parsed.format} body")
    ctx = Ctx(parsed.limits, repl=mine, lossy=parsed.lossy)
    out = _visit(parsed.data, ctx)
    if not ctx.hits:
        return parsed.decoded or b""
    if isinstance(out, bytes):
        return out
    errors = "surrogateescape" if parsed.lossy else "strict"
    try:
        return out.encode(parsed.charset, errors)
    except (UnicodeEncodeError, LookupError):
        return out.encode(parsed.charset, "backslashreplace")


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
