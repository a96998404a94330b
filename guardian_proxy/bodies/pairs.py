"""Key=value texts: urlencoded forms, query strings, batched beacon lines and cookies.

Raw segments are kept, so a write-back changes only the values it replaces (every other byte,
escape style and separator stays as the client sent it). Paths: ``form:q``, ``form:tag#1`` (second
``tag``), ``form:en@2`` (line 2 of a batched beacon body), ``query:uid``, ``cookie:sid``.

A part sent without a key (``/pixel?jane@x.com&4111…``) is a value too: ``query:#1`` is the text of the 2nd
``&``-part (``form:#1`` in a form). A query string that is one JSON document (``?%7B%22email%22…``, raw or
URL-encoded) or one base64 token is read as a single key-less value, ``query:#0``, with the document inside
(``query:#0>$.email``, ``query:#0>b64:$.email``); it goes back in the same encoding.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit

from .model import BodyLimits, Ctx

_KEY = re.compile(r"[\w.\[\]%$:-]{1,100}")
_B64_WHOLE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_JSON_OPEN = ("{", "[", "%7B", "%5B")


@dataclass
class Pairs:
    segs: list[tuple[str, str | None]]  # (raw key, raw value or None when the segment has no '=')
    sep: str = "&"
    whole: str | None = None  # "json" | "b64": the query string is one document (a single key-less segment)


def split(text: str, sep: str = "&") -> Pairs:
    segs: list[tuple[str, str | None]] = []
    for seg in text.split(sep):
        k, eq, v = seg.partition("=")
        segs.append((k, v if eq else None))
    return Pairs(segs, sep)


def split_query(text: str) -> Pairs:
    """`split` for a query string, which may also be one JSON document or one base64 token as a whole."""
    if text[:3].upper().startswith(_JSON_OPEN):
        doc = unquote(text).strip()
        if len(doc) >= 2 and doc[-1] in "}]":
            try:
                json.loads(doc)
                return Pairs([(text, None)], whole="json")
            except (ValueError, RecursionError):
                pass
    elif ("+" in text or text.endswith("=")) and _B64_WHOLE.fullmatch(text):  # '+' and '=' are base64's
        return Pairs([(text, None)], whole="b64")
    return split(text)


def _keyless(p: Pairs, rk: str) -> str:
    if p.whole == "json":
        return unquote(rk)
    return rk if p.whole == "b64" else unquote_plus(rk)


def _keyless_raw(p: Pairs, new: str) -> str:
    if p.whole == "b64":
        return quote(new, safe="+/=")
    return quote(new, safe="") if p.whole == "json" else quote_plus(new, safe="")


def visit(p: Pairs, ctx: Ctx, prefix: str, suffix: str = "", decode: bool = True, embed: bool = True) -> str | None:
    out = []
    for i, (rk, rv) in enumerate(p.segs):
        if rv is None and (not rk or not decode):  # empty segment, or a cookie without '='
            out.append(rk)
            continue
        if rv is None:  # a value sent without a key
            new = ctx.leaf(f"{prefix}#{i}{suffix}", _keyless(p, rk), None, 0, embed=embed)
            if ctx.build:
                out.append(rk if new is None else _keyless_raw(p, new))
            continue
        key = unquote_plus(rk) if decode else rk.strip()
        value = (unquote_plus(rv) if decode else rv.strip()) if rv is not None else ""
        new = ctx.leaf(f"{prefix}{key}{suffix}", value, key, 0, embed=embed)
        if ctx.build:
            if new is None:
                out.append(rk if rv is None else f"{rk}={rv}")
            elif decode:
                out.append(f"{rk}={quote_plus(new, safe='')}")
            else:
                lead = rv[: len(rv) - len(rv.lstrip())] if rv else ""
                out.append(f"{rk}={lead}{new}")
    return p.sep.join(out) if ctx.build else None


def is_form_like(text: str) -> bool:
    """Every non-empty line is `k=v&k=v` (no whitespace, parameter-like keys, some value non-empty):
    a urlencoded form or a batch of them, one per line."""
    lines = [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()]
    if not lines:
        return False
    for ln in lines:
        if any(c.isspace() for c in ln):
            return False
        segs = [s.partition("=") for s in ln.split("&") if s]
        if not segs or any(not eq or not _KEY.fullmatch(k) for k, eq, _v in segs):
            return False
        if not any(v for _k, _eq, v in segs):
            return False
    return True


@dataclass
class FormLines:
    lines: list[str]
    pairs: list[Pairs | None]


def split_lines(text: str) -> FormLines:
    lines = text.split("\n")
    return FormLines(lines, [split(ln.rstrip("\r")) if ln.strip() else None for ln in lines])


def visit_lines(doc: FormLines, ctx: Ctx) -> str | None:
    out = []
    for i, (line, p) in enumerate(zip(doc.lines, doc.pairs, strict=True)):
        if p is None:
            out.append(line)
            continue
        before = ctx.hits
        r = visit(p, ctx, "form:", f"@{i}")
        out.append(r + ("\r" if line.endswith("\r") else "") if ctx.build and ctx.hits != before else line)
    return "\n".join(out) if ctx.build else None


# --------------------------------------------------------------------------- query strings and cookies

_LIM = BodyLimits()  # query strings and cookies: the default limits (URL and header sizes bound them), the same
# when they are read and when they are rewritten, so field paths match


def _query_split(url: str) -> tuple[str, str, str] | None:
    q = url.find("?")
    if q < 0:
        return None
    h = url.find("#", q)
    end = h if h >= 0 else len(url)
    return url[: q + 1], url[q + 1 : end], url[end:]


def query_fields(url: str):
    parts = _query_split(url)
    if parts is None:
        return []
    ctx = Ctx(_LIM)
    visit(split_query(parts[1]), ctx, "query:")
    return ctx.fields


def rewrite_query(url: str, repl: dict[str, str]) -> str:
    parts = _query_split(url)
    if parts is None:
        return url
    ctx = Ctx(_LIM, repl)
    new = visit(split_query(parts[1]), ctx, "query:")
    return url if not ctx.hits else parts[0] + new + parts[2]


def cookie_fields(header: str | None):
    if not header:
        return []
    ctx = Ctx(_LIM)
    visit(split(header, ";"), ctx, "cookie:", decode=False, embed=False)
    return ctx.fields


def rewrite_cookie_header(header: str, repl: dict[str, str]) -> str:
    ctx = Ctx(_LIM, repl)
    new = visit(split(header, ";"), ctx, "cookie:", decode=False, embed=False)
    return header if not ctx.hits else new


def rewrite_path(url: str, new_path: str) -> str:
    """Replace the raw path of `url` (characters a path may not hold are percent-encoded)."""
    s = urlsplit(url)
    old = s.path
    if not old or new_path == old:
        return url
    start = url.find(old, len(s.scheme) + 3 + len(s.netloc))
    if start < 0:
        return url
    safe = quote(new_path, safe="/%:@!$&'()*+,;=-._~")
    return url[:start] + safe + url[start + len(old):]
