"""JSON paths as the project writes them: ``$.user.email``, ``$.items[0]['first name']``."""

from __future__ import annotations

import re

_IDENT = re.compile(r"\A[A-Za-z_][A-Za-z0-9_\-]*\Z")  # \Z: "$" would accept a trailing newline
_SEG = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*')\]")
_UNESCAPE = re.compile(r"\\(.)")


def json_path(parts: tuple) -> str:
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _IDENT.match(p):
            out += f".{p}"
        else:
            out += "['" + p.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return out


def parse_json_path(path: str) -> tuple:
    """Inverse of `json_path` for one document (the part before any ``>``)."""
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
            parts.append(_UNESCAPE.sub(r"\1", m.group(3)[1:-1]))
        pos = m.end()
    return tuple(parts)
