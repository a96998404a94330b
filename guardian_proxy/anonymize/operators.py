"""Span operators per level. L1 partial masking; L2+ typed placeholders, consistent within a request."""

from __future__ import annotations

from ..types import Span


def partial_mask(value: str, entity: str) -> str:
    if entity == "EMAIL_ADDRESS" and "@" in value:
        local, _, domain = value.partition("@")
        return f"{local[:1]}***@{domain}"
    digits = [c for c in value if c.isdigit()]
    if entity in ("CREDIT_CARD", "IBAN_CODE", "US_BANK_NUMBER", "PHONE_NUMBER") and len(digits) >= 4:
        return "•••• " + "".join(digits[-4:])
    if len(value) <= 2:
        return "*" * len(value)
    return value[0] + "*" * (len(value) - 1)


class Placeholders:
    """`[PERSON_1]` for the first distinct person, the same tag for the same value everywhere."""

    def __init__(self):
        self._tags: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}

    def tag(self, span: Span) -> str:
        key = (span.entity, span.text.strip().lower())
        if key not in self._tags:
            n = self._counts.get(span.entity, 0) + 1
            self._counts[span.entity] = n
            self._tags[key] = f"[{span.entity}_{n}]"
        return self._tags[key]


def apply_spans(text: str, spans: list[Span], render) -> str:
    """Replace non-overlapping spans (longest first on overlap) right to left."""
    chosen: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if chosen and s.start < chosen[-1].end:
            continue
        chosen.append(s)
    for s in reversed(chosen):
        text = text[: s.start] + render(s) + text[s.end :]
    return text
