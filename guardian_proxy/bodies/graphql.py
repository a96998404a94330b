"""GraphQL documents: the string literals (inline arguments) are the only values a query carries.

`literals(doc)` lists them with the argument name before each (`createUser(email: "…")` → key
``email``); `substitute(doc, {index: new})` writes new values back as properly escaped literals.
Comments are skipped; block strings (triple quotes) are read as values too.
"""

from __future__ import annotations

import json
import re

# closing quotes are optional so a literal cut off by the end of the text still matches: every match consumes
# what it scanned and the tokenizer stays linear (a failed match would be re-scanned from every quote)
_TOKEN = re.compile(r'"""((?:[^"\\]|\\.|"(?!""))*)("""|\Z)|"((?:[^"\\\n]|\\.)*)("?)|#[^\n]*')
# the lookbehind makes a search start only at the first letter of a name: linear, not quadratic, on long input
_ARG = re.compile(r"(?<![_0-9A-Za-z])([_A-Za-z][_0-9A-Za-z]{0,60})\s{0,5}:\s{0,5}\Z")
_START = re.compile(r"\s{0,64}(?:query|mutation|subscription|fragment)\b|\s{0,64}\{")
_OPNAME = re.compile(r"\s{0,64}(?:query|mutation|subscription)\s{1,20}([_A-Za-z][_0-9A-Za-z]{0,100})")


def looks_like(text: str) -> bool:
    return _START.match(text) is not None and "}" in text


def operation(text: str) -> tuple[str, str | None]:
    """(operation type, name) of the first operation: ("mutation", "Login"), ("query", None) …"""
    s = text.lstrip()
    kind = "mutation" if s.startswith("mutation") else "subscription" if s.startswith("subscription") else "query"
    m = _OPNAME.match(text)
    return kind, (m.group(1) if m else None)


def literals(doc: str) -> list[tuple[int, int, str, str | None, str]]:
    """(start, end, value, argument name, kind) for each string literal, in order; kind is one of
    block, string, block_open, string_open (the last two cut off by the end of the text)."""
    out = []
    for m in _TOKEN.finditer(doc):
        if m.group(0).startswith("#"):
            continue
        if m.group(1) is not None:
            value, kind = m.group(1).replace('\\"""', '"""'), "block" if m.group(2) else "block_open"
        else:
            try:
                value = json.loads('"' + m.group(3) + '"')
            except ValueError:
                value = m.group(3)
            kind = "string" if m.group(4) else "string_open"
        am = _ARG.search(doc, max(0, m.start() - 80), m.start())
        out.append((m.start(), m.end(), value, am.group(1) if am else None, kind))
    return out


def substitute(doc: str, lits: list, new: dict[int, str]) -> str:
    out, pos = [], 0
    for i, (start, end, _value, _key, kind) in enumerate(lits):
        if i not in new:
            continue
        out.append(doc[pos:start])
        if kind.startswith("block"):
            text = '"""' + new[i].replace('"""', '\\"""') + ('"""' if kind == "block" else "")
        else:
            text = json.dumps(new[i], ensure_ascii=False)
            text = text if kind == "string" else text[:-1]
        out.append(text)
        pos = end
    out.append(doc[pos:])
    return "".join(out)
