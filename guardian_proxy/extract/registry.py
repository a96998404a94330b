"""The recognizer registry (Presidio's RecognizerRegistry is the model): every detector of stage 1 is registered
under a stable name and answers `analyze(text, ctx)` with located results that say who found them and why.

Registered (names are stable: they travel in `Span.recognizer`, the decision log and the dashboard):

  pattern:<kind>   extract/patterns.py — e-mail, phone, card (Luhn), IBAN (mod 97), SSN, NINO, IP, MAC, lat/long,
                   street address, postcode, date of birth, NHS (mod 11), home directory
  secret:<kind>    extract/secrets.py — vendor API keys, tokens/JWTs, written-out passwords, PEM private keys
  health           extract/health.py — medications and conditions by lookup and context phrase
  narrative        extract/narrative.py — quasi-identifier patterns (dates, ages, kin, occupations …) without spaCy
  ner              extract/ner.py — Presidio + spaCy (PERSON, LOCATION, NRP …) plus the narrative recognizers on
                   the parsed doc; batched per request, only on natural-language fields
  key              extract/keys.py — the field name proposes a type for the whole value; kept only when the value
                   passes the type's validator (extract/validators.py); vendor vocabularies only for those vendors
  cookie           extract/keys.py — the cookie's name (session, advertising and analytics ids)
  digest           a hex digest (MD5/SHA-1/SHA-256) on its way to a party that matches people (ad network, broker,
                   social network): a hashed e-mail or phone match key

Text recognizers (`needs_context = False`) see only the text: their results are cached per text. Field
recognizers read the FieldContext (key, carrier, recipient class, vendor) and are never cached. Which of them run
for a field is decided by `plan` (NER only on natural-language text: not on ids, numbers, URLs, enums, base64,
hex, nor on cookies, host labels or technical keys). One resolver (extract/resolver.py) then gives each value its
type once.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..types import HOST_PATH
from . import health, keys, patterns, secrets, validators
from .context import FieldContext
from .narrative import detect_quasi

#: recipients whose business is matching people across sites: a digest they receive is a match key
MATCHERS = ("ad_network", "data_broker", "social")
_DIGEST = re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{64}|[0-9a-f]{40}|[0-9a-f]{32})(?![0-9a-f])")
_FREE = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,}\s+[^\W\d_]{2}")
_NOT_LETTER = re.compile(r"[^\W\d_]+|\s+")
_RUN = re.compile(r"([^\w\s])\1{2,}")
#: a token that is a word: letters, an apostrophe or hyphen inside, punctuation after ("card,", "I'm", "well-known.")
_WORDY_TOKEN = re.compile(r"[(\"'“‘]?[^\W\d_]+(?:['’-][^\W\d_]+)*[.,;:!?)\"'”’]{0,3}")
#: letters, then digits, then letters again inside one token (`z5Q`, `c9vy`): an id's or base64's, not a word's
_ID_TOKEN = re.compile(r"[^\W\d_]\d+[^\W\d_]")
_URLISH = re.compile(r"\s*(?:[a-z][a-z0-9+.-]{1,15}:)?//\S*\s*$|\s*/\S*\s*$", re.I)


class Result(NamedTuple):
    """A located hit: (start, end, entity, score) first, so code that reads 4-tuples keeps working."""

    start: int
    end: int
    entity: str
    score: float
    recognizer: str = ""
    reason: str = ""


class Recognizer:
    name = ""
    needs_context = False
    batch = False  # run over all of a request's texts at once (NER), not by analyze_text

    def analyze(self, text: str, ctx: FieldContext | None) -> list[Result]:
        raise NotImplementedError


#: pattern recognizers whose every match holds a digit, or an `@`: skipped on a text without one (most fields)
_NEEDS_DIGIT = frozenset({"phone", "credit_card", "iban", "us_ssn", "uk_nino", "lat_long", "street_address",
                          "postcode", "nhs", "date_of_birth"})
_DIGIT = re.compile(r"\d")


class PatternRecognizer(Recognizer):
    """One of extract/patterns.py's or secrets.py's recognizers under `<family>:<kind>`."""

    def __init__(self, family: str, rec: patterns.Recognizer):
        kind = _snake(type(rec).__name__.removesuffix("Recognizer"))
        self.name = f"{family}:{kind}"
        self.rec = rec
        self.find = rec.find
        self.needs_digit = family == "pattern" and kind in _NEEDS_DIGIT
        self.needs_at = family == "pattern" and kind == "email"

    def analyze(self, text, ctx=None):
        return [Result(s, e, ent, sc, self.name) for s, e, ent, sc in self.rec.find(text)]


class PrivateKeyRecognizer(Recognizer):
    name = "secret:private_key"

    def analyze(self, text, ctx=None):
        if "PRIVATE KEY" not in text:
            return []
        return [Result(s, e, ent, sc, self.name) for s, e, ent, sc in secrets.private_keys(text)]


class HealthRecognizer(Recognizer):
    name = "health"

    def analyze(self, text, ctx=None):
        return [Result(s, e, ent, sc, self.name) for s, e, ent, sc in health.find(text)]


class NarrativeRecognizer(Recognizer):
    name = "narrative"

    def analyze(self, text, ctx=None):
        return [Result(s, e, ent, sc, self.name) for s, e, ent, sc in detect_quasi(text, None)]


class KeyRecognizer(Recognizer):
    """The field name as evidence for the whole value (trimmed); see keys.key_candidate."""

    name = "key"
    needs_context = True

    def analyze(self, text, ctx):
        if ctx is None or not ctx.key or ctx.carrier == "cookie":
            return []
        req = ctx.request
        vendor = validators.vendor_destination(req.recipient, req.owner) if req is not None else None
        c = keys.key_candidate(ctx.key, text, vendor)
        if c is None:
            return []
        lead = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [Result(lead, end, c[0], 0.9, self.name, c[1])] if end > lead else []


class CookieRecognizer(Recognizer):
    name = "cookie"
    needs_context = True

    def analyze(self, text, ctx):
        if ctx is None or ctx.carrier != "cookie":
            return []
        entity = keys.cookie_entity(ctx.key or "")
        lead = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        if entity is None or end <= lead:
            return []
        return [Result(lead, end, entity, 0.9, self.name, f"cookie:{keys.normalise(ctx.key or '')[:24]}")]


class DigestRecognizer(Recognizer):
    """Hex digests sent to an ad network, broker or social network are hashed identifiers (match keys), whatever
    the field is called (not the URL path, where a digest names a versioned asset, nor a protocol field such as
    `hash`, `etag`, `nonce`): hashing an e-mail does not make it anonymous to a party that holds the same hash."""

    name = "digest"
    needs_context = True

    def analyze(self, text, ctx):
        if ctx is None or ctx.recipient not in MATCHERS or ctx.path in ("path:", HOST_PATH) or keys.skip_ner(ctx.key):
            return []
        return [Result(m.start(), m.end(), "HASHED_IDENTIFIER", 0.8, self.name, f"digest to {ctx.recipient}")
                for m in _DIGEST.finditer(text)]


class NerRecognizer(Recognizer):
    """Presidio + spaCy (extract/ner.py's NerEngine), batched by the detector over a request's natural-language
    fields; `analyze` runs one text."""

    name = "ner"
    batch = True

    def __init__(self, engine):
        self.engine = engine

    def analyze(self, text, ctx=None):
        return [Result(s, e, ent, sc, self.name, f"ner {ent} {sc:.2f}") for s, e, ent, sc in self.engine.analyze([text])[0]]


class Registry:
    """Recognizers by stable name, in the order they run."""

    def __init__(self):
        self._recognizers: dict[str, Recognizer] = {}
        self._plans: dict[bool | str, list[Recognizer]] = {}

    def register(self, rec: Recognizer) -> Recognizer:
        if rec.name in self._recognizers:
            raise ValueError(f"recognizer {rec.name!r} registered twice")
        self._recognizers[rec.name] = rec
        self._plans.clear()
        return rec

    def names(self) -> list[str]:
        return list(self._recognizers)

    def get(self, name: str) -> Recognizer:
        return self._recognizers[name]

    def text_recognizers(self, narrative: bool) -> list[Recognizer]:
        return [r for r in self._recognizers.values()
                if not r.needs_context and not r.batch and (narrative or r.name != "narrative")]

    def field_recognizers(self) -> list[Recognizer]:
        return [r for r in self._recognizers.values() if r.needs_context]

    def analyze_text(self, text: str, narrative: bool) -> list[Result]:
        """Every text recognizer a text needs: the digit patterns only where there is a digit, the e-mail pattern
        only where there is an `@` (or `%40`)."""
        plan = self._plans.get(narrative)
        if plan is None:
            plan = self._plans[narrative] = self.text_recognizers(narrative)
        digit = _DIGIT.search(text) is not None
        at = "@" in text or "%40" in text
        out: list[Result] = []
        for r in plan:
            if isinstance(r, PatternRecognizer):
                if (r.needs_digit and not digit) or (r.needs_at and not at):
                    continue
                hits = r.find(text)
                if hits:
                    name = r.name
                    out += [Result(s, e, ent, sc, name) for s, e, ent, sc in hits]
            else:
                out += r.analyze(text, None)
        return out

    def analyze_field(self, text: str, ctx: FieldContext) -> list[Result]:
        plan = self._plans.get("field")
        if plan is None:
            plan = self._plans["field"] = self.field_recognizers()
        out: list[Result] = []
        for r in plan:
            out += r.analyze(text, ctx)
        return out


def default_registry() -> Registry:
    reg = Registry()
    for rec in patterns.RECOGNIZERS:
        reg.register(PatternRecognizer("pattern", rec))
    reg.register(PrivateKeyRecognizer())
    for rec in secrets.RECOGNIZERS:
        reg.register(PatternRecognizer("secret", rec))
    for rec in (HealthRecognizer(), NarrativeRecognizer(), KeyRecognizer(), CookieRecognizer(), DigestRecognizer()):
        reg.register(rec)
    return reg


def natural_language(text: str, ctx: FieldContext | None) -> bool:
    """The field can hold free text worth NER: not a cookie, host label or technical key (user agent, enum, id …),
    and the text reads as words: two words in a row, mostly letters and spaces (not an id, number, URL, base64 or
    hex run)."""
    if ctx is not None and (ctx.carrier in ("cookie", "host", "path") or keys.skip_ner(ctx.key)):
        return False
    if _FREE.search(text) is None:
        return False
    head = text[:4000]
    if " " not in head.strip() and _URLISH.match(head):
        return False
    tokens = head.split()
    if len(tokens) <= 8 and sum(1 for t in tokens if _ID_TOKEN.search(t)) * 2 >= len(tokens):
        return False  # base64 or ids split at '+' or spaces (`DWLSSz5Q dMc9vy dkbhYQ`): digits inside letters
    # digits, punctuation, symbols; a run of one mark is one (an invoice's dot leaders "....... £389.00", a table's
    # rule "-----", a Markdown table's pipes and padding read as text)
    marks = _RUN.sub(r"\1", head)
    other = len(_NOT_LETTER.sub("", marks))
    if other <= 0.4 * len(marks):
        return True
    # a sentence full of figures ("My rent is $2,100 and I owe $14,500 on my card 4111 1111 1111 1111.") is still
    # words: most of its space-separated tokens are words, whatever the length of its numbers
    return len(tokens) >= 4 and sum(1 for t in tokens if _WORDY_TOKEN.fullmatch(t)) >= 0.6 * len(tokens)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
