"""multipart/form-data: text parts become fields (``form:<name>``), file names too
(``form:<name>>filename``); binary file parts are recorded by name, type and size and never read.

The body is kept as the list of its byte chunks (preamble, delimiter lines, parts, closing
delimiter), so a write-back changes only the part bodies and header values it replaces; a part's
own Content-Length header, when present, is updated; the boundary stays the same and a replacement
that would contain it is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import BodyError
from .model import Ctx, FilePart

_PARAM = re.compile(r';\s*([A-Za-z0-9_*\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')
_TEXTY = ("text/", "application/json", "application/xml", "application/x-www-form-urlencoded",
          "application/graphql", "application/csv")
_CLEN = re.compile(rb"(?im)^(content-length:[ \t]*)\d+")
_FNAME = re.compile(r'(;\s*filename\s*=\s*)("(?:[^"\\]|\\.)*"|[^;\r\n]*)', re.I)
_FNAME_STAR = re.compile(r"(;\s*filename\*\s*=\s*)([^;\r\n]*)", re.I)


@dataclass
class Part:
    head: bytes  # header lines and the blank line after them
    body: bytes
    name: str
    filename: str | None
    ctype: str
    charset: str
    text: str | None  # decoded content of a text part; None for a file part that is not text


@dataclass
class Multipart:
    boundary: bytes
    chunks: list  # bytes | Part; their concatenation is the original body


def _headers(head: bytes) -> dict[str, str]:
    out = {}
    for line in head.decode("utf-8", "replace").splitlines():
        k, sep, v = line.partition(":")
        if sep:
            out[k.strip().lower()] = v.strip()
    return out


def _params(value: str) -> dict[str, str]:
    out = {}
    for m in _PARAM.finditer(value):
        v = m.group(2).strip()
        if v.startswith('"') and v.endswith('"') and len(v) >= 2:
            v = re.sub(r"\\(.)", r"\1", v[1:-1])
        out[m.group(1).lower()] = v
    return out


def _part(raw: bytes, default_charset: str) -> Part:
    if raw.startswith(b"\r\n") or raw.startswith(b"\n"):
        cut = 2 if raw.startswith(b"\r\n") else 1
    else:
        i, n = raw.find(b"\r\n\r\n"), 4
        if i < 0:
            i, n = raw.find(b"\n\n"), 2
        cut = i + n if i >= 0 else len(raw)
    head, body = raw[:cut], raw[cut:]
    h = _headers(head)
    disp = _params(";" + h.get("content-disposition", "").partition(";")[2])
    ctype_full = h.get("content-type", "")
    ctype = ctype_full.split(";")[0].strip().lower()
    charset = _params(";" + ctype_full.partition(";")[2]).get("charset", default_charset)
    filename = disp.get("filename")
    if filename is None and "filename*" in disp:
        filename = disp["filename*"].split("''", 1)[-1]
    text = None
    texty = not ctype or ctype.startswith(_TEXTY) or ctype.endswith("+json")
    if texty and (filename is None or ctype) and "content-transfer-encoding" not in h:
        try:
            text = body.decode(charset)
        except (UnicodeDecodeError, LookupError):
            text = None
    return Part(head, body, disp.get("name", ""), filename, ctype, charset, text)


def parse(data: bytes, boundary: str, charset: str, flags: list[str]) -> Multipart | None:
    delim = b"--" + boundary.encode("latin-1", "replace")
    if data.startswith(delim):
        pos = 0
    else:
        i = data.find(b"\n" + delim)
        if i < 0:
            return None
        pos = i + 1
    chunks: list = [data[:pos]]
    while True:
        after = pos + len(delim)
        if data[after : after + 2] == b"--":
            chunks.append(data[pos:])
            return Multipart(delim, chunks)
        eol = data.find(b"\n", after)
        if eol < 0:
            chunks.append(data[pos:])
            break
        chunks.append(data[pos : eol + 1])
        start = eol + 1
        nxt, sep = data.find(b"\r\n" + delim, start), 2
        if nxt < 0:
            nxt, sep = data.find(b"\n" + delim, start), 1
        if nxt < 0:
            chunks.append(_part(data[start:], charset))
            break
        chunks.append(_part(data[start:nxt], charset))
        chunks.append(data[nxt : nxt + sep])
        pos = nxt + sep
    if "truncated" not in flags:
        flags.append("truncated")  # no closing delimiter
    return Multipart(delim, chunks)


def _set_filename(head: bytes, new: str) -> bytes:
    text = head.decode("utf-8", "surrogateescape")
    quoted = '"' + new.replace("\\", "\\\\").replace('"', '\\"') + '"'
    text = _FNAME.sub(lambda m: m.group(1) + quoted, text, count=1)
    text = _FNAME_STAR.sub(lambda m: m.group(1) + "UTF-8''" + _pct(new), text, count=1)
    return text.encode("utf-8", "surrogateescape")


def _pct(s: str) -> str:
    from urllib.parse import quote

    return quote(s, safe="")


def visit(mp: Multipart, ctx: Ctx) -> bytes | None:
    out: list[bytes] = []
    for ch in mp.chunks:
        if isinstance(ch, bytes):
            out.append(ch)
            continue
        head, body = ch.head, ch.body
        if ch.filename is not None:
            new = ctx.leaf(f"form:{ch.name}>filename", ch.filename, "filename", 0, embed=False)
            if new is not None:
                head = _set_filename(head, new)
        if ch.text is not None:
            new = ctx.leaf(f"form:{ch.name}", ch.text, ch.name, 0)
            if new is not None:
                body = new.encode(ch.charset, "replace")
                if mp.boundary in body:
                    raise BodyError("a replacement contains the multipart boundary")
                size = str(len(body)).encode()
                head = _CLEN.sub(lambda m, size=size: m.group(1) + size, head)
        elif not ctx.build:
            ctx.files.append(FilePart(ch.name, ch.ctype or "application/octet-stream", len(ch.body),
                                      ch.filename is not None))
        out.append(head + body)
    return b"".join(out) if ctx.build else None
