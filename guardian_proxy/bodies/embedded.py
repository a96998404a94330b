"""Documents inside a string value, walked in place and written back in their own encoding.

    json:$.props>$.email              a JSON object/array serialised into a string (also form/query values)
    form:data>b64:$.properties.email  base64 (standard or URL-safe) of a JSON document (Mixpanel-style)
    json:$.pd>b64t:                   base64 of plain text (ID5's `pd`, a base64 e-mail): one text field
    json:$.ctx>url:$.email            a JSON document URL-encoded once more inside a value (`%7B%22email%22…`),
                                      or up to MAX_URL_LAYERS times (`%257B%2522email…`): written back as often
    json:$.query>gql:0                the first string literal of a GraphQL document

Base64 is read also when it is wrapped in lines (MIME, 76 columns; written back wrapped the same way) and when
a form or query decoding turned its '+' into spaces. Decoded base64 becomes a field only when it is JSON or text
a person or a protocol wrote (`_plain_text`): the random bytes behind an id, hash or token do not.

A replacement for the outer path itself (``json:$.props``) still replaces the whole string.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from . import graphql, jsondoc
from .model import Ctx

_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_B64_WRAPPED = re.compile(r"(?:[A-Za-z0-9+/]{16,100}={0,2}(\r?\n))+[A-Za-z0-9+/]*={0,2}(?:\r?\n)?")
_PCT_JSON = ("%7B", "%5B")  # a URL-encoded `{` or `[` opening a value
_PCT2_JSON = ("%257B", "%255B")  # the same, URL-encoded once more
MAX_URL_LAYERS = 3
_GQL_KEYS = {"query", "mutation"}


@dataclass
class Embedded:
    kind: str  # json | b64 | b64t | url | gql
    raw: str
    value: object = None  # parsed JSON (json, b64)
    urlsafe: bool = False
    padded: bool = True
    lits: list | None = None  # graphql literals
    layers: int = 1  # url: how many times the document was URL-encoded
    wrap: int = 0  # b64/b64t: line width of wrapped (MIME) base64, 0 when on one line
    eol: str = "\n"  # b64/b64t wrapped: the line ending
    tail: str = ""  # b64/b64t wrapped: what followed the last line (a final line ending)


def _json_value(s: str):
    t = s.strip()
    if len(t) < 2 or t[0] not in "{[" or t[-1] not in "}]":
        return None
    try:
        v = jsondoc.loads(t)
    except (ValueError, RecursionError):
        return None
    return v if isinstance(v, dict | list) and v else None


def detect(raw: str, key: str | None, gql: bool = False) -> Embedded | None:
    if not raw:
        return None
    start = raw[:64].lstrip()  # a prefix: never a copy of a long value
    c = start[:1]
    if c in ("{", "[") and not gql:
        v = _json_value(raw)
        if v is not None:
            return Embedded("json", raw, v)
    if (gql or (key or "").lower() in _GQL_KEYS) and graphql.looks_like(raw):
        return Embedded("gql", raw, lits=graphql.literals(raw))
    if c == "%" and (start[:3].upper() in _PCT_JSON or start[:5].upper() in _PCT2_JSON):
        return _url(raw)
    if len(raw) < 16:
        return None
    if _B64.fullmatch(raw):
        return _base64(raw, raw)
    spaces = raw.count(" ")
    if spaces and spaces * 8 < len(raw) and "  " not in raw and _B64.fullmatch(plus := raw.replace(" ", "+")):
        return _base64(plus, raw)  # base64 whose '+' a form or query decoding turned into spaces
    if "\n" in raw and (m := _B64_WRAPPED.fullmatch(raw)):
        lines = raw.split(m.group(1))
        width = len(lines[0])
        if all(len(ln) == width for ln in lines[:-2]) and len(lines[-2 if not lines[-1] else -1]) <= width:
            doc = _base64("".join(lines), raw)
            if doc is not None:
                doc.wrap, doc.eol, doc.tail = width, m.group(1), m.group(1) if raw.endswith(m.group(1)) else ""
            return doc
    return None


def _url(raw: str) -> Embedded | None:
    s, layers = raw, 0
    while layers < MAX_URL_LAYERS and s.lstrip()[:3].upper() in (*_PCT_JSON, "%25"):
        s, layers = unquote(s), layers + 1
    v = _json_value(s)
    return Embedded("url", raw, v, layers=layers) if v is not None else None


def _base64(b64: str, raw: str) -> Embedded | None:
    try:
        data = base64.b64decode(b64.replace("-", "+").replace("_", "/") + "=" * (-len(b64.rstrip("=")) % 4))
        text = data.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    urlsafe, padded = ("-" in b64 or "_" in b64), len(b64) % 4 == 0
    v = _json_value(text) if b64[:1] in ("e", "W") else None
    if v is not None:
        return Embedded("b64", raw, v, urlsafe=urlsafe, padded=padded)
    if _plain_text(text):
        return Embedded("b64t", raw, text, urlsafe=urlsafe, padded=padded)
    return None


def _plain_text(text: str) -> bool:
    """Decoded bytes that are text a person or a protocol wrote (printable, mostly letters, digits and the usual
    separators), not the random bytes of a token that happens to be valid base64."""
    if len(text) < 8 or not all(ch.isprintable() or ch in "\t\n\r" for ch in text):
        return False
    usual = sum(ch.isalnum() or ch in " .,:;=&@_-+/%'\"?!()[]{}#" for ch in text)
    return usual >= 0.9 * len(text)


def visit(doc: Embedded, ctx: Ctx, prefix: str, edepth: int) -> str | None:
    """Collect the inner fields, or (build mode) return the new raw string."""
    if doc.kind == "gql":
        new = {}
        for i, (_s, _e, value, key, _b) in enumerate(doc.lits):
            r = ctx.leaf(f"{prefix}gql:{i}", value, key, edepth, embed=False)
            if r is not None:
                new[i] = r
        return graphql.substitute(doc.raw, doc.lits, new) if ctx.build else None
    if doc.kind == "b64t":
        new = ctx.leaf(f"{prefix}b64t:", doc.value, None, edepth)
        if not ctx.build or new is None:
            return None
        return _b64(new, doc)
    inner = prefix + {"b64": "b64:", "url": "url:"}.get(doc.kind, "")
    text = jsondoc.visit(doc.value, ctx, inner, edepth)
    if not ctx.build:
        return None
    if doc.kind == "json":
        return text
    if doc.kind == "url":
        for _ in range(doc.layers):
            text = quote(text, safe="")
        return text
    return _b64(text, doc)


def _b64(text: str, doc: Embedded) -> str:
    enc = base64.urlsafe_b64encode if doc.urlsafe else base64.b64encode
    out = enc(text.encode("utf-8")).decode("ascii")
    out = out if doc.padded else out.rstrip("=")
    if doc.wrap:
        out = doc.eol.join(out[i : i + doc.wrap] for i in range(0, len(out), doc.wrap)) + doc.tail
    return out

