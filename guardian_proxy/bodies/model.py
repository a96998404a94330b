"""What a parsed body is made of, and the walk context shared by every format.

One traversal per format serves both directions: with `Ctx(repl=None)` it collects the text fields
(`TextField` with a unique path), with `Ctx(repl={path: text})` it re-encodes the body with those
texts put back. Both walks compute the same paths in the same order, so a path read from a field
always writes back to the same place. A value keeps its format on the way back: a UUID stays a valid UUID
(`keep_format`), a JSON number a JSON number (jsondoc).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import standins
from ..standins import UUID_RE
from ..types import TextField

_SURROGATE = re.compile("[\udc80-\udcff]")
MAX_EMBED_DEPTH = 3  # JSON in a string in JSON in a string ... stops here


@dataclass
class BodyLimits:
    max_body_bytes: int = 2 * 1024 * 1024
    max_decoded_bytes: int = 8 * 1024 * 1024
    max_json_depth: int = 64
    max_field_chars: int = 100_000


@dataclass
class FilePart:
    """A multipart file part that is not text: recorded by field name, type and size, never read."""

    name: str
    content_type: str
    size: int
    filename: bool = False  # a file name was sent (it is a text field: form:<name>>filename)


@dataclass
class ParsedBody:
    format: str  # none|json|ndjson|graphql|form|multipart|protobuf|text|binary|unparsed|too_large
    fields: list[TextField] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    decoded: bytes | None = None
    charset: str = "utf-8"
    data: object = None  # the parsed document kept for write-back (see bodies.write_back)
    files: list[FilePart] = field(default_factory=list)
    limits: BodyLimits = field(default_factory=BodyLimits)
    lossy: bool = False  # decoded with surrogateescape (invalid UTF-8 kept byte for byte)
    encoding: str | None = None  # compression found by its magic bytes with no Content-Encoding (flag `sniffed`)
    bom: bytes = b""  # the byte-order mark a UTF-16 body without a charset began with (written back with it)
    head: bytes | None = None  # too_large: the (decoded) first part that was read; `decoded` stays None
    rest: bytes | None = None  # too_large: the bytes after it, written back as sent (None: cannot be rebuilt)


class DupObj:
    """A JSON object with duplicate keys, kept as its list of pairs so no value is hidden."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list):
        self.pairs = pairs


def keep_format(old: str, new: str) -> str:
    """A value that was a UUID is written back as one: a replacement that is no UUID (a placeholder, a mask,
    `[…]`) becomes a stand-in UUID of the same version, variant and case, drawn from a keyed hash of both."""
    v = old.strip()
    if UUID_RE.fullmatch(v) and not UUID_RE.fullmatch(new.strip()):
        return old.replace(v, standins.uuid(v, standins.rng_for("uuid", old, new)))
    return new


class Ctx:
    """Walk state: collected fields (collect mode) or replacements (build mode), flags, unique paths."""

    def __init__(self, limits: BodyLimits, repl: dict[str, str] | None = None, flags: list[str] | None = None,
                 lossy: bool = False):
        self.limits = limits
        self.repl = repl
        self.build = repl is not None
        self.flags = flags if flags is not None else []
        self.fields: list[TextField] = []
        self.used: set[str] = set()
        self._next: dict[str, int] = {}  # next free #n per path (duplicate keys, repeated form fields)
        self.lossy = lossy
        self.hits = 0  # replacements applied (build mode)
        self.files: list[FilePart] = []

    def flag(self, name: str) -> None:
        if name not in self.flags:
            self.flags.append(name)

    def unique(self, path: str) -> str:
        if path in self.used:
            base, n = path, self._next.get(path, 1)
            while f"{base}#{n}" in self.used:
                n += 1
            self._next[base] = n + 1
            path = f"{base}#{n}"
        self.used.add(path)
        return path

    def wants(self, prefix: str) -> bool:
        """Build mode: does any replacement address something below `prefix`?"""
        return any(k.startswith(prefix) for k in self.repl or ())

    def leaf(self, path: str, raw: str, key: str | None, edepth: int = 0, embed: bool = True,
             gql: bool = False) -> str | None:
        """One string value. Collect mode: record it (or what is embedded in it), return None.
        Build mode: the new raw value if a replacement addresses it or something inside it, else None."""
        from . import embedded  # late: embedded walks back into the formats

        path = self.unique(path)
        maxc = self.limits.max_field_chars
        if self.build and path in self.repl:
            self.hits += 1
            new = keep_format(raw, self.repl[path])
            return new + raw[maxc:] if len(raw) > maxc else new
        doc = embedded.detect(raw, key, gql) if embed and edepth < MAX_EMBED_DEPTH and len(raw) <= maxc else None
        if doc is not None:
            inner = path + ">"
            if not self.build:
                embedded.visit(doc, self, inner, edepth + 1)
                return None
            return embedded.visit(doc, self, inner, edepth + 1) if self.wants(inner) else None
        if not self.build:
            text = raw
            if len(text) > maxc:
                text = text[:maxc]
                self.flag("truncated")
            if self.lossy:
                text = _SURROGATE.sub("\ufffd", text)  # same length: offsets stay valid
            self.fields.append(TextField(path=path, text=text, key=key))
        return None
