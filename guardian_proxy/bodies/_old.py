"""Request bodies, query strings and cookies → text fields with paths, and the way back.

Paths name where a text sits so a rewrite can put it back in the same format:

    json:$.user.email   json:$.items[0]['first name']   form:q   query:uid   cookie:sid   text:

`parse_body` never raises: a body it cannot read comes back with format ``unparsed`` (or
``binary``) and a flag saying why. `write_back` rebuilds the decoded body with replacement texts
(JSON stays valid JSON with the same shape, form stays form).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from . import codec
from .errors import BodyError, BodyTooLarge
from .types import TextField

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_SEG = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*')\]")


@dataclass
class BodyLimits:
    max_body_bytes: int = 2 * 1024 * 1024
    max_decoded_bytes: int = 8 * 1024 * 1024
    max_json_depth: int = 64
    max_field_chars: int = 100_000


@dataclass
class ParsedBody:
    format: str  # none|json|form|text|binary|unparsed|too_large (extended by extract/)
    fields: list[TextField] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    decoded: bytes | None = None
    charset: str = "utf-8"
    data: object = None  # parsed structure kept for write-back (JSON value, form pairs)


# --------------------------------------------------------------------------- JSON paths


def json_path(parts: tuple) -> str:
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _IDENT.match(p):
            out += f".{p}"
        else:
            out += "[" + "'" + p.replace("\\", "\\\\").replace("'", "\\'") + "'" + "]"
    return out


def parse_json_path(path: str) -> tuple:
    if not path.startswith("$"):
        raise ValueError(f"not a JSON path: {path!r}")
    parts: list = []
    pos = 1
    while pos < len(path):
        m = _SEG.match(path, pos)
        if not m:
            raise ValueError(f"bad JSON path {path!r} at {pos}")
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(int(m.group(2)))
        else:
            raw = m.group(3)[1:-1]
            parts.append(re.sub(r"\\(.)", r"\1", raw))
        pos = m.end()
    return tuple(parts)


def _walk_json(value, parts: tuple, out: list[TextField], limits: BodyLimits, flags: list[str]) -> None:
    if len(parts) > limits.max_json_depth:
        if "depth_limit" not in flags:
            flags.append("depth_limit")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _walk_json(v, parts + (str(k),), out, limits, flags)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk_json(v, parts + (i,), out, limits, flags)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        text = value if isinstance(value, str) else json.dumps(value)
        if len(text) > limits.max_field_chars:
            text = text[: limits.max_field_chars]
            if "truncated" not in flags:
                flags.append("truncated")
        key = next((p for p in reversed(parts) if isinstance(p, str)), None)
        out.append(TextField(path="json:" + json_path(parts), text=text, key=key))


def _set_json(value, parts: tuple, new: str):
    if not parts:
        return new
    head, rest = parts[0], parts[1:]
    value[head] = _set_json(value[head], rest, new) if rest else _typed(value[head], new)
    return value


def _typed(old, new: str):
    """Keep a number a number when the replacement is still numeric."""
    if isinstance(old, int | float) and not isinstance(old, bool):
        try:
            return json.loads(new) if re.fullmatch(r"-?\d+(\.\d+)?", new) else new
        except ValueError:
            return new
    return new


# --------------------------------------------------------------------------- parse


def _charset(content_type: str) -> str:
    m = re.search(r"charset=\"?([\w\-]+)", content_type or "", re.I)
    return m.group(1).lower() if m else "utf-8"


def _pairs_fields(prefix: str, pairs: list[tuple[str, str]]) -> list[TextField]:
    seen: dict[str, int] = {}
    out = []
    for k, v in pairs:
        n = seen.get(k, 0)
        seen[k] = n + 1
        out.append(TextField(path=f"{prefix}:{k}" + (f"#{n}" if n else ""), text=v, key=k))
    return out


def parse_body(body: bytes, content_type: str | None, content_encoding: str | None, limits: BodyLimits) -> ParsedBody:
    if not body:
        return ParsedBody(format="none", decoded=b"")
    if len(body) > limits.max_body_bytes:
        return ParsedBody(format="too_large", flags=["too_large"])
    try:
        decoded = codec.decode(body, content_encoding, limits.max_decoded_bytes)
    except BodyTooLarge:
        return ParsedBody(format="too_large", flags=["too_large", "decompression_limit"])
    except BodyError:
        return ParsedBody(format="unparsed", flags=["unparsed", "bad_encoding"])
    ctype = (content_type or "").split(";")[0].strip().lower()
    charset = _charset(content_type or "")
    try:
        text = decoded.decode(charset)
    except (UnicodeDecodeError, LookupError):
        if ctype.startswith(("text/", "application/json", "application/x-www-form-urlencoded")) or not ctype:
            return ParsedBody(format="unparsed", flags=["unparsed", "invalid_utf8"], decoded=decoded)
        return ParsedBody(format="binary", flags=["binary"], decoded=decoded)
    flags: list[str] = []
    if ctype.endswith("json") or (not ctype and text.lstrip()[:1] in "{["):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return ParsedBody(format="unparsed", flags=["unparsed", "invalid_json"], decoded=decoded, charset=charset)
        fields: list[TextField] = []
        _walk_json(data, (), fields, limits, flags)
        return ParsedBody(format="json", fields=fields, flags=flags, decoded=decoded, charset=charset, data=data)
    if ctype == "application/x-www-form-urlencoded":
        pairs = parse_qsl(text, keep_blank_values=True)
        return ParsedBody(format="form", fields=_pairs_fields("form", pairs), decoded=decoded, charset=charset, data=pairs)
    if ctype.startswith("text/") or not ctype:
        if len(text) > limits.max_field_chars:
            flags.append("truncated")
        return ParsedBody(
            format="text", fields=[TextField(path="text:", text=text[: limits.max_field_chars])],
            flags=flags, decoded=decoded, charset=charset,
        )
    return ParsedBody(format="binary", flags=["binary"], decoded=decoded, charset=charset)


def parse_query(url: str) -> list[TextField]:
    return _pairs_fields("query", parse_qsl(urlsplit(url).query, keep_blank_values=True))


def parse_cookies(cookie_header: str | None) -> list[TextField]:
    if not cookie_header:
        return []
    pairs = []
    for part in cookie_header.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            pairs.append((k.strip(), v.strip()))
    return _pairs_fields("cookie", pairs)


# --------------------------------------------------------------------------- write back


def _replace_pairs(prefix: str, pairs: list[tuple[str, str]], repl: dict[str, str]) -> list[tuple[str, str]]:
    fields = _pairs_fields(prefix, pairs)
    return [(k, repl.get(f.path, v)) for (k, v), f in zip(pairs, fields, strict=True)]


def write_back(parsed: ParsedBody, replacements: dict[str, str]) -> bytes:
    """The decoded body with the given field texts replaced (paths not in the body are ignored)."""
    mine = {p: t for p, t in replacements.items() if p.split(":", 1)[0] in ("json", "form", "text")}
    if not mine:
        return parsed.decoded or b""
    if parsed.format == "json":
        data = json.loads(json.dumps(parsed.data))  # deep copy
        for path, new in mine.items():
            if path.startswith("json:"):
                data = _set_json(data, parse_json_path(path[5:]), new)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(parsed.charset)
    if parsed.format == "form":
        return urlencode(_replace_pairs("form", parsed.data, mine)).encode(parsed.charset)
    if parsed.format == "text" and "text:" in mine:
        return mine["text:"].encode(parsed.charset)
    raise BodyError(f"cannot write back into a {parsed.format} body")


def rewrite_url(url: str, replacements: dict[str, str]) -> str:
    mine = {p: t for p, t in replacements.items() if p.startswith("query:")}
    if not mine:
        return url
    s = urlsplit(url)
    pairs = _replace_pairs("query", parse_qsl(s.query, keep_blank_values=True), mine)
    return urlunsplit((s.scheme, s.netloc, s.path, urlencode(pairs), s.fragment))


def rewrite_cookies(cookie_header: str, replacements: dict[str, str]) -> str:
    mine = {p: t for p, t in replacements.items() if p.startswith("cookie:")}
    pairs = [(f.key or "", f.text) for f in parse_cookies(cookie_header)]
    return "; ".join(f"{k}={v}" for k, v in _replace_pairs("cookie", pairs, mine))
