"""Span operators of the lower levels and the splice that applies any operator.

L1 `partial_mask`: keep what lets a user recognise their own data (`j***@acme.com`, card `•••• 1111`,
initials of a name, the last two characters of a code). L2 `Placeholders`: typed, numbered tags,
consistent within a request (`[PERSON_1]` everywhere for the same person).

A UUID keeps its format at every level (a device or anonymous id is read by software that expects one): its
mask keeps the last four hex digits and its placeholder is a numbered all-zero UUID, both with the original's
version and variant nibbles and case (`00000000-0000-4000-8000-000000000001`).
"""

from __future__ import annotations

from .. import standins
from ..types import Span
from .spans import _NAME_PART
from .surrogates import _TITLE

_DIGIT_TAIL = ("CREDIT_CARD", "IBAN_CODE", "US_BANK_NUMBER", "ACCOUNT_NUMBER", "PHONE_NUMBER")


def _zero_uuid(value: str, tail: str) -> str:
    """An all-zero UUID with `value`'s version and variant nibbles and case, ending in `tail`."""
    chars = ["-" if c == "-" else "0" for c in value]
    chars[14], chars[19] = value[14], value[19]
    out = "".join(chars)
    out = out[: len(out) - len(tail)] + tail
    return out.upper() if value.isupper() else out


def partial_mask(value: str, entity: str) -> str:
    if standins.UUID_RE.fullmatch(value):
        return _zero_uuid(value, value[-4:])
    if entity == "EMAIL_ADDRESS" and "@" in value:
        local, _, domain = value.partition("@")
        return f"{local[:1]}***@{domain}"
    digits = [c for c in value if c.isdigit()]
    if entity in _DIGIT_TAIL and len(digits) >= 4:
        return "•••• " + "".join(digits[-4:])
    if entity == "PERSON":
        m = _TITLE.match(value)
        title = m.group() if m else ""
        words = value[len(title):].split()
        return title + " ".join(w[0] + "***" for w in words) if words else value
    if entity == "USERNAME":
        at = "@" if value.startswith("@") else ""
        v = value.lstrip("@")
        return at + v[:1] + "***"
    if len(value) <= 2:
        return "*" * len(value)
    if sum(c.isalnum() for c in value) >= 6:
        return "•" * (len(value) - 2) + value[-2:]
    return value[0] + "*" * (len(value) - 1)


class Placeholders:
    """`[PERSON_1]` for the first distinct person, the same tag for the same value everywhere."""

    def __init__(self):
        self._tags: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._parts: dict[str, str] = {}  # a person's name part → their tag ("Christou" → [PERSON_1])
        self._uuids = 0

    def tag(self, span: Span) -> str:
        key = (span.entity, span.text.strip().lower())
        if key in self._tags:
            return self._tags[key]
        parts = _name_parts(span.text) if span.entity in ("PERSON", "USERNAME") else []
        known = next((self._parts[p] for p in parts if p in self._parts), None)
        if known is None:
            n = self._counts.get(span.entity, 0) + 1
            self._counts[span.entity] = n
            known = f"[{span.entity}_{n}]"
            if standins.UUID_RE.fullmatch(span.text):  # numbered over all UUIDs: two types never share one
                self._uuids += 1
                known = _zero_uuid(span.text, f"{self._uuids:x}")
        self._tags[key] = known
        for p in parts:
            self._parts.setdefault(p, known)
        return known


def _name_parts(value: str) -> list[str]:
    m = _TITLE.match(value)
    rest = value[m.end():] if m else value
    return [w.lower() for w in _NAME_PART.findall(rest)]


def apply_spans(text: str, spans: list[Span], render) -> str:
    """Replace spans right to left; on overlap the earlier (then longer) span wins. `render(span)` returns
    the replacement, or None to keep the original text."""
    chosen: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if chosen and s.start < chosen[-1].end:
            continue
        chosen.append(s)
    for s in reversed(chosen):
        new = render(s)
        if new is not None:
            text = text[: s.start] + new + text[s.end :]
    return text
