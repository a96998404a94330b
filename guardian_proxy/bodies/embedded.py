"""Documents inside a string value, walked in place and written back in their own encoding.

    json:$.props>$.email              a JSON object/array serialised into a string (also form/query values)
    form:data>b64:$.properties.email  base64 (standard or URL-safe) of a JSON document (Mixpanel-style)
    json:$.query>gql:0                the first string literal of a GraphQL document

A replacement for the outer path itself (``json:$.props``) still replaces the whole string.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from . import graphql, jsondoc
from .model import Ctx

_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_GQL_KEYS = {"query", "mutation"}


@dataclass
class Embedded:
    kind: str  # json | b64 | gql
    raw: str
    value: object = None  # parsed JSON (json, b64)
    urlsafe: bool = False
    padded: bool = True
    lits: list | None = None  # graphql literals


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
    c = raw.lstrip()[:1]
    if c in ("{", "[") and not gql:
        v = _json_value(raw)
        if v is not None:
            return Embedded("json", raw, v)
    if (gql or (key or "").lower() in _GQL_KEYS) and graphql.looks_like(raw):
        return Embedded("gql", raw, lits=graphql.literals(raw))
    if len(raw) >= 16 and c in ("e", "W") and _B64.fullmatch(raw):
        try:
            data = base64.b64decode(raw.replace("-", "+").replace("_", "/") + "=" * (-len(raw.rstrip("=")) % 4))
            v = _json_value(data.decode("utf-8"))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return None
        if v is not None:
            return Embedded("b64", raw, v, urlsafe=("-" in raw or "_" in raw),
                            padded=len(raw) % 4 == 0)
    return None


def visit(doc: Embedded, ctx: Ctx, prefix: str, edepth: int) -> str | None:
    """Collect the inner fields, or (build mode) return the new raw string."""
    if doc.kind == "gql":
        new = {}
        for i, (_s, _e, value, key, _b) in enumerate(doc.lits):
            r = ctx.leaf(f"{prefix}gql:{i}", value, key, edepth, embed=False)
            if r is not None:
                new[i] = r
        return graphql.substitute(doc.raw, doc.lits, new) if ctx.build else None
    inner = prefix + ("b64:" if doc.kind == "b64" else "")
    text = jsondoc.visit(doc.value, ctx, inner, edepth)
    if not ctx.build:
        return None
    if doc.kind == "json":
        return text
    enc = base64.urlsafe_b64encode if doc.urlsafe else base64.b64encode
    out = enc(text.encode("utf-8")).decode("ascii")
    return out if doc.padded else out.rstrip("=")

