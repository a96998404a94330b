"""The five levels as operators over located spans (and, from L4, the text around them).

| level | direct identifiers            | quasi-identifiers             | the rest of the text                         |
|-------|-------------------------------|-------------------------------|----------------------------------------------|
| L1    | partial mask (`j***@acme.com`) | kept                          | kept                                          |
| L2    | typed placeholder `[PERSON_1]` | kept                          | kept                                          |
| L3    | placeholder                    | generalized (generalize.py)   | kept                                          |
| L4    | Faker surrogate (placeholder when the type has none) | generalized coarser | rare identifying tokens suppressed (residue ≥ 0.6) |
| L5    | surrogate                      | typed tag                     | residue ≥ 0.4 suppressed; a sentence left more than 3/4 hidden (half in a strict field) is dropped |

Suppressed text becomes `[…]`. Direct identifiers are the `direct=True` entities of `types.ENTITIES`,
except CASE_NUMBER, which L3 removes as the issue asks (a file number has no useful generalization).
L4/L5 with an LLM are in llm_rewrite.py; this module is the deterministic path and the fallback.
"""

from __future__ import annotations

from collections import defaultdict

import regex as re

from ..types import Span, TextField
from . import residue
from .generalize import REMOVED, generalize
from .operators import Placeholders, apply_spans, partial_mask
from .spans import _ALIAS
from .surrogates import Surrogates

_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[\p{Lu}\d“\"(\[])|\n+")
_ABBREV = re.compile(r"(?:\b\p{Lu}|\b(?:Mr|Mrs|Ms|Dr|Prof|No|Nos|Art|para|St|Co|Ltd|Inc|approx|e\.g|i\.e|cf|v|vs|pp?))\.$")
_WORDS = re.compile(r"\w+")
_TITLE = re.compile(r"(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Sir|Dame|Lady|Lord|Mme|Mlle|Herr|Frau)\.?\s+)+")
_SUPPRESS_AT = {4: 0.6, 5: 0.4}
#: L5 drops a sentence whose words are hidden beyond this share (what is left of it says nothing); in a language
#: the detectors do not read (strict) beyond half
DROP_SHARE = 0.75


def is_direct(span: Span) -> bool:
    return span.direct and span.entity != "CASE_NUMBER"


class LevelRenderer:
    """Renders every field of one request at a given level. One instance per request: placeholders and
    surrogates stay consistent across fields and levels."""

    def __init__(self, fields: list[TextField], spans: list[Span], surrogates: Surrogates,
                 strict_paths: set[str] | None = None):
        self.fields = {f.path: f.text for f in fields}
        self.spans: dict[str, list[Span]] = defaultdict(list)
        for s in spans:
            if s.path in self.fields:
                self.spans[s.path].append(s)
        self.placeholders = Placeholders()
        self.surrogates = surrogates
        # persons' surrogates are drawn in reading order, full names first, so "Christou" alone follows "Anna
        # Christou"; only when a level that shows surrogates (L4, L5) is first rendered: most requests stay below
        # it, and each name costs Faker a re-seed and a weighted draw
        self._persons: list[Span] | None = []
        for f in fields:  # numbered in reading order: the first person met is [PERSON_1]
            for s in sorted(self.spans.get(f.path, []), key=lambda s: s.start):
                if is_direct(s) or s.entity == "CASE_NUMBER":
                    self.placeholders.tag(s)
                if is_direct(s) and s.entity == "PERSON":
                    self._persons.append(s)
        self.strict = strict_paths or set()

    def _surrogate(self, s: Span) -> str | None:
        """A surrogate; a person's courtesy title is not kept ("Mr Casey" → "Garcia", never "Mr Diane Johnston"):
        the title says the person's sex and would not match a surrogate name drawn without it."""
        if self._persons is not None:  # the first surrogate of this request: the persons' come first
            persons, self._persons = self._persons, None
            for p in persons:
                self._surrogate(p)
        value = s.text
        if s.entity == "PERSON":
            m = _TITLE.match(value)
            if m and m.end() < len(value):
                value = value[m.end():]
        return self.surrogates.render(s.entity, value)

    def render(self, level: int) -> dict[str, str]:
        """path → rewritten text, for every field that changes at this level."""
        out = {}
        for path, text in self.fields.items():
            spans = self.spans.get(path, [])
            lvl = 5 if path in self.strict else level
            if not spans and lvl < 4:
                continue
            new = self.render_text(text, spans, lvl, strict=path in self.strict)
            if new != text:
                out[path] = new
        return out

    def _op(self, level: int):
        def render(s: Span) -> str | None:
            if is_direct(s):
                if level == 1:
                    return partial_mask(s.text, s.entity)
                if level <= 3:
                    return self.placeholders.tag(s)
                return self._surrogate(s) or self.placeholders.tag(s)
            if level <= 2:
                return partial_mask(s.text, s.entity) if level == 1 and s.entity == "CASE_NUMBER" else \
                    (self.placeholders.tag(s) if s.entity == "CASE_NUMBER" else None)
            return generalize(s.text, s.entity, level)
        return render

    def render_text(self, text: str, spans: list[Span], level: int, strict: bool = False) -> str:
        if level < 4:
            return apply_spans(text, spans, self._op(level))
        ranges = [(s.start, s.end) for s in spans]
        floor = _SUPPRESS_AT[min(level, 5)]
        cues = residue.scan(text, skip=ranges, min_confidence=floor)
        cues += _acronyms_of(text, cues)
        if strict:
            cues += [c for c in _rare_words(text, ranges) if not any(c.start < d.end and d.start < c.end for d in cues)]
        hidden = list(spans) + [Span(path="", start=c.start, end=c.end, entity="_RESIDUE", category="other",
                                     text=c.value, direct=False) for c in cues]
        op = self._op(level)

        def render(s: Span) -> str | None:
            return REMOVED if s.entity == "_RESIDUE" else op(s)

        if level < 5:
            return apply_spans(text, hidden, render)
        return self._sentences(text, hidden, render, strict)

    @staticmethod
    def _sentences(text: str, hidden: list[Span], render, strict: bool = False) -> str:
        """L5: rewrite sentence by sentence; drop one whose words are mostly hidden."""
        out = []
        for a, b in sentences(text, hidden):
            inner = [s.model_copy(update={"start": s.start - a, "end": s.end - a}) for s in hidden
                     if s.start >= a and s.end <= b]
            sent = text[a:b]
            words = len(_WORDS.findall(sent))
            covered = sum(len(_WORDS.findall(sent[s.start:s.end])) for s in inner)
            if words >= 4 and covered > (0.5 if strict else DROP_SHARE) * words:
                out.append(REMOVED + sent[len(sent.rstrip()):])
            else:
                out.append(apply_spans(sent, inner, render))
        return "".join(out)


def _acronyms_of(text: str, cues: list[residue.Cue]) -> list[residue.Cue]:
    """The acronym defined in parentheses right after a hidden word ("the Energiewerke Nord (EWE)"): its short name,
    hidden with it as `spans.aliases` hides a located value's."""
    taken = {(c.start, c.end) for c in cues}
    out = []
    for c in cues:
        m = _ALIAS.match(text, c.end)
        if m and sum(ch.isupper() for ch in m.group(1)) >= 2 and m.span(1) not in taken:
            out.append(residue.Cue(m.start(1), m.end(1), c.kind, m.group(1), c.confidence))
    return out


def sentences(text: str, spans: list[Span]) -> list[tuple[int, int]]:
    """Sentence ranges covering the whole text; never cut inside a span or after an abbreviation/initial."""
    cuts = [0]
    for m in _BOUNDARY.finditer(text):
        a = m.start()
        if _ABBREV.search(text[max(0, a - 6): a]) or any(s.start < a < s.end for s in spans):
            continue
        cuts.append(m.end())
    cuts.append(len(text))
    return [(x, y) for x, y in zip(cuts, cuts[1:], strict=False) if y > x]


def _rare_words(text: str, skip: list[tuple[int, int]]) -> list[residue.Cue]:
    """Strict mode (non-English fields): every word English rarely uses."""
    out = []
    for m in re.finditer(r"\p{L}[\p{L}'’\-]+", text):
        a, b = m.span()
        if any(x < b and a < y for x, y in skip):
            continue
        if residue.zipf(m.group().lower()) < 3.0:
            out.append(residue.Cue(a, b, "rare", m.group(), 0.5))
    return out
