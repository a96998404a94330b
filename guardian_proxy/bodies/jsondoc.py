"""JSON documents: parse (duplicate keys kept), walk/re-encode, NDJSON lines, and a lenient scan of
the string literals of JSON that does not parse (truncated or invalid), which can still be written back
by splicing each literal in place."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .. import standins
from .jsonpath import json_path
from .model import Ctx, DupObj

_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)("?)')  # a JSON string literal, possibly cut off at the end
_AFTER = re.compile(r"\s{0,100}:")


def _hook(pairs: list) -> dict | DupObj:
    d = dict(pairs)
    return DupObj(pairs) if len(d) != len(pairs) else d


def loads(text: str):
    """`json.loads` that keeps duplicate keys (as `DupObj`). Raises ValueError / RecursionError."""
    return json.loads(text, object_pairs_hook=_hook)


def dumps(value) -> str:
    """Compact JSON text; `DupObj` written back with all its pairs."""
    if isinstance(value, DupObj):
        return "{" + ",".join(_s(k) + ":" + dumps(v) for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        if not any(isinstance(v, dict | list | DupObj) for v in value.values()):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return "{" + ",".join(_s(k) + ":" + dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _s(k: str) -> str:
    return json.dumps(k, ensure_ascii=False)


_TAG = re.compile(r"\[([A-Z][A-Z_]*?)(?:_\d+)?\]")


def _typed(new: str, old: str) -> str:
    """A JSON number stays a JSON number: a replacement that is one is written as it is; a placeholder, a mask
    or text with digits (`[PHONE_NUMBER_1]`, `52.[CREDIT_CARD_1]`, `0123`) becomes a stand-in number of the
    original's shape (a phone a fiction-range number, a card a test card where the digits allow, else the
    same digit count, decimals and exponent), drawn from a keyed hash of the value and its replacement."""
    if standins.is_json_number(new):
        return new
    rng = standins.rng_for("json-number", old, new)
    tag = _TAG.fullmatch(new.strip())
    if tag is not None and old.lstrip("-").isdigit():
        cand = standins.render(tag.group(1), old.lstrip("-"), rng)
        if cand is not None and standins.is_json_number(cand) and len(cand) == len(old.lstrip("-")):
            return ("-" if old.startswith("-") else "") + cand
    cand = standins.number(old, rng)
    return cand if cand is not None and standins.is_json_number(cand) else old


def visit(value, ctx: Ctx, prefix: str, edepth: int, parts: tuple = (), depth: int = 0,
          key: str | None = None) -> str | None:
    """Collect the leaves of a JSON value, or (build mode) return its JSON text with replacements."""
    build = ctx.build
    if depth > ctx.limits.max_json_depth:
        ctx.flag("depth_limit")
        return dumps(value) if build else None
    if isinstance(value, dict | DupObj):
        if isinstance(value, DupObj):
            ctx.flag("duplicate_keys")
            items = value.pairs
        else:
            items = value.items()
        out = [] if build else None
        for k, v in items:
            r = visit(v, ctx, prefix, edepth, parts + (k,), depth + 1, k)
            if build:
                out.append(_s(k) + ":" + r)
        return "{" + ",".join(out) + "}" if build else None
    if isinstance(value, list):
        out = [] if build else None
        for i, v in enumerate(value):
            r = visit(v, ctx, prefix, edepth, parts + (i,), depth + 1, key)
            if build:
                out.append(r)
        return "[" + ",".join(out) + "]" if build else None
    if isinstance(value, str):
        new = ctx.leaf(prefix + json_path(parts), value, key, edepth)
        return (_s(value) if new is None else _s(new)) if build else None
    if value is None or isinstance(value, bool):
        return json.dumps(value) if build else None
    text = json.dumps(value)
    new = ctx.leaf(prefix + json_path(parts), text, key, edepth, embed=False)
    return (text if new is None else _typed(new, text)) if build else None


# --------------------------------------------------------------------------- NDJSON


@dataclass
class Lines:
    """NDJSON / JSON lines: `lines[i]` is the raw line, `values[i]` its parsed value (None when blank)."""

    lines: list[str]
    values: list
    sep: str = "\n"


def parse_lines(text: str, sep: str = "\n") -> Lines | None:
    lines = text.split(sep)
    values = []
    for line in lines:
        s = line.strip().strip("\x1e")
        if not s:
            values.append(None)
            continue
        try:
            values.append(loads(s))
        except (ValueError, RecursionError):
            return None
    if sum(v is not None for v in values) == 0:
        return None
    return Lines(lines, values, sep)


def visit_lines(doc: Lines, ctx: Ctx, prefix: str = "json:") -> str | None:
    out = []
    for i, (line, v) in enumerate(zip(doc.lines, doc.values, strict=True)):
        if v is None:
            out.append(line)
            continue
        before = ctx.hits
        r = visit(v, ctx, prefix, 0, (i,), 1)
        out.append(r if ctx.build and ctx.hits != before else line)
    return doc.sep.join(out) if ctx.build else None


# --------------------------------------------------------------------------- lenient scan


@dataclass
class Lenient:
    """String literals of a JSON text that does not parse: (start, end, content, is_key)."""

    text: str
    literals: list[tuple[int, int, str, bool]]


def scan(text: str) -> Lenient:
    lits = []
    for m in _LITERAL.finditer(text):
        body = m.group(1)
        try:
            content = json.loads('"' + body + '"')
        except ValueError:
            content = body
        is_key = bool(m.group(2)) and _AFTER.match(text, m.end()) is not None
        lits.append((m.start(1), m.start(1) + len(body), content, is_key))
    return Lenient(text, lits)


def visit_lenient(doc: Lenient, ctx: Ctx) -> str | None:
    out, pos, key, n = [], 0, None, 0
    for start, end, content, is_key in doc.literals:
        if is_key:
            key = content
            continue
        new = ctx.leaf(f"json:@{n}", content, key, 0, embed=False)
        n += 1
        if ctx.build and new is not None:
            out.append(doc.text[pos:start])
            out.append(_s(new)[1:-1])
            pos = end
    if not ctx.build:
        return None
    out.append(doc.text[pos:])
    return "".join(out)


__all__ = ["Lenient", "Lines", "dumps", "json_path", "loads", "parse_lines", "scan", "visit",
           "visit_lenient", "visit_lines"]
