"""GraphQL documents: the string literals (inline arguments) are the only values a query carries.

`literals(doc)` lists them with the argument name before each (`createUser(email: "…")` → key
``email``); `substitute(doc, {index: new})` writes new values back as properly escaped literals.
Comments are skipped; block strings (triple quotes) are read as values too.
"""

from __future__ import annotations

import json
import re

_TOKEN = re.compile(r'"""((?:[^"\\]|\\.|"(?!""))*)"""|"((?:[^"\\\n]|\\.)*)"|#[^\n]*')
_ARG = re.compile(r"([_A-Za-z][_0-9A-Za-z]*)\s*:\s*\Z")
_START = re.compile(r"\s*(?:query|mutation|subscription|fragment)\b|\s*\{")
_OPNAME = re.compile(r"\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)")


def looks_like(text: str) -> bool:
    return _START.match(text) is not None and "}" in text


def operation(text: str) -> tuple[str, str | None]:
    """(operation type, name) of the first operation: ("mutation", "Login"), ("query", None) …"""
    s = text.lstrip()
    kind = "mutation" if s.startswith("mutation") else "subscription" if s.startswith("subscription") else "query"
    m = _OPNAME.match(text)
    return kind, (m.group(1) if m else None)


def literals(doc: str) -> list[tuple[int, int, str, str | None, bool]]:
    """(start, end, value, argument name, block string?) for each string literal, in order."""
    out = []
    for m in _TOKEN.finditer(doc):
        if m.group(0).startswith("#"):
            continue
        block = m.group(1) is not None
        if block:
            value = m.group(1).replace('\\"""', '"""')
        else:
            try:
                value = json.loads('"' + m.group(2) + '"')
            except ValueError:
                value = m.group(2)
        am = _ARG.search(doc, max(0, m.start() - 80), m.start())
        out.append((m.start(), m.end(), value, am.group(1) if am else None, block))
    return out


def substitute(doc: str, lits: list, new: dict[int, str]) -> str:
    out, pos = [], 0
    for i, (start, end, _value, _key, block) in enumerate(lits):
        if i not in new:
            continue
        out.append(doc[pos:start])
        if block:
            out.append('"""' + new[i].replace('"""', '\\"""') + '"""')
        else:
            out.append(json.dumps(new[i], ensure_ascii=False))
        pos = end
    out.append(doc[pos:])
    return "".join(out)
