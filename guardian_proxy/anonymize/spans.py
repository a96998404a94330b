"""Span bookkeeping before any level is applied.

- `propagate`: a value found once is hidden everywhere in the request — every other occurrence of the same
  value in any field (word-bounded, case-insensitive) becomes a span of the same type, and each part of a
  person's name ("Christou" after "Mrs Anna Evagorou Christou") is found on its own when capitalised. So is each
  word of a livelihood that English uses rarely ("reindeer", "grazing" after "reindeer herding", "winter grazing":
  "his reindeer" tells the same trade; livelihoods.py), and each mention of a one-word job the writer names as their
  own ("chef here … who's head chef": self_disclosure.py), though an ordinary word is otherwise not propagated. This
  is what keeps placeholders consistent and catches PII split across JSON fields.
- `titles`: a courtesy title ("Mr", "Dr.") is part of the person's name span after it, and a title before
  capitalised words no span covers is a person's name ("Mr Casey"): the title is personal (it says the sex) and
  left outside the span it would contradict the surrogate ("Mr Diane Johnston").
- `merge`: overlapping spans (Presidio and the narrative recognizers often find the same thing twice) become
  one span over their union, typed by the longest member (direct identifiers win ties). Adjacent spans stay
  separate so each keeps its own type.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import regex as re

from .. import self_disclosure
from ..institutions import INSTITUTION_HEADS, SPECIALISED
from ..livelihoods import is_livelihood
from ..person_names import ENGLISH, faker_names
from ..types import ENTITIES, Span, TextField

#: entities whose exact value is searched for elsewhere in the request
#: not NRP: a nationality describes the person in "a Turkish national" and is context in "Turkish law"
PROPAGATE = {"PERSON", "USERNAME", "EMAIL_ADDRESS", "PHONE_NUMBER", "STREET_ADDRESS", "LOCATION", "ORGANIZATION",
             "CASE_NUMBER", "GOVERNMENT_ID", "US_SSN", "US_PASSPORT", "US_DRIVER_LICENSE", "CREDIT_CARD",
             "IBAN_CODE", "ACCOUNT_NUMBER", "IP_ADDRESS", "MEDICAL_CONDITION", "OCCUPATION", "AGE"}
TITLES = {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "judge", "sir", "dame", "lady", "lord", "mme",
          "mlle", "herr", "frau", "the", "and", "von", "van", "der", "den", "de", "da", "di", "del", "la", "le", "bin",
          "al", "el"}
#: Zipf frequency of an ordinary English word (wordfreq): such a word alone is not propagated
COMMON_WORD = 4.0
_NAME_PART = re.compile(r"\p{Lu}[\p{L}'’\-]{2,}")
_LOWER_WORD = re.compile(r"\p{L}[\p{L}'’\-]+")


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """English word frequency on the Zipf scale (0 = unseen, 7 = 'the')."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


def _span(field: TextField, start: int, end: int, entity: str, score: float) -> Span:
    cat, direct = ENTITIES.get(entity, ("other", False))
    return Span(path=field.path, start=start, end=end, entity=entity, category=cat, score=score,
                text=field.text[start:end], direct=direct)


def _bounded(value: str) -> str:
    v = re.escape(value)
    return (r"(?<!\w)" if value[:1].isalnum() else "") + v + (r"(?!\w)" if value[-1:].isalnum() else "")


#: a courtesy title: part of the name it stands before ("Mr Diane Johnston" would leak the title and contradict
#: the surrogate)
_TITLE = re.compile(r"(?<![\w.])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame)\.?[ \t]+$")
#: a title and the capitalised word(s) after it is a person's name even where NER missed it ("Mr Casey")
_TITLED_NAME = re.compile(r"(?<![\w.])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?[ \t]+(?:\p{Lu}\.[ \t]?)*"
                          r"\p{Lu}[\p{L}'’\-]+(?:[ \t]+\p{Lu}[\p{L}'’\-]+){0,2}")
_CAP_WORD = re.compile(r"\p{Lu}[\p{L}'’\-]+")
_COLON = re.compile(r"[ \t]*:(?![/\d])")
#: a courtesy title that is a field's value on its own ("Title: Mrs. Name: …", "Salutation: Mr"): it says the sex, as
#: a gender field does, with no name after it to be part of
#: (its full stop stays: it may end the sentence too)
_TITLE_VALUE = re.compile(r"(?<=:[ \t]{0,3})(?:Mr|Mrs|Ms|Miss)(?=\.?+[ \t]*(?:[.,;|\n]|$|\p{Lu}[\p{L}'’\-]*+[ \t]*:))")


@lru_cache(maxsize=1)
def _names() -> frozenset[str]:
    return faker_names("first_names", "first_names_male", "first_names_female", "last_names", locales=ENGLISH)


def _before_label(text: str, a: int, b: int) -> int | None:
    """The end of a titled name at text[a:b] before a field label ("Title: Mrs. Name: Ashley Smith": "Name" is the
    next field's label, a common word before a colon that is no one's name; "Mr Jones: …" is a speaker); None when
    no name is left after the title."""
    words = list(_CAP_WORD.finditer(text, a, b))[1:]  # the first is the title
    for i, w in enumerate(words):
        low = w.group().lower()
        if _COLON.match(text, w.end()) and zipf(low) >= 3.0 and low not in _names():
            return words[i - 1].end() if i else None
    return b


def titles(fields: list[TextField], spans: list[Span]) -> list[Span]:
    """A PERSON span takes the courtesy title right before it; a title followed by capitalised words that no
    span covers is a PERSON span of its own."""
    text_of = {f.path: f.text for f in fields}
    out = []
    for s in spans:
        text = text_of.get(s.path)
        if s.entity == "PERSON" and text is not None and text[s.start:s.end] == s.text:
            m = _TITLE.search(text, max(0, s.start - 8), s.start)
            if m:
                s = s.model_copy(update={"start": m.start(), "text": text[m.start():s.end]})
        out.append(s)
    covered: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in out:
        covered[s.path].append((s.start, s.end))
    for f in fields:
        for m in _TITLED_NAME.finditer(f.text):
            a, b = m.span()
            b = _before_label(f.text, a, b)
            if b is not None and not any(x < b and a < y for x, y in covered[f.path]):
                out.append(_span(f, a, b, "PERSON", 0.7))
                covered[f.path].append((a, b))
        for m in _TITLE_VALUE.finditer(f.text):
            a, b = m.span()
            if not any(x < b and a < y for x, y in covered[f.path]):
                out.append(_span(f, a, b, "GENDER", 0.7))
    return out


#: an acronym defined right after a name: "the Employment Appeal Tribunal (“EAT”)", "Kurdistan Workers' Party (PKK)"
_ALIAS = re.compile(r"[ \t]*\([ \t]*[“\"‘']?(?:the[ \t]+)?(\p{Lu}[\p{Lu}\d&\-]{1,7})[”\"’']?[ \t]*\)")


#: a parenthesis right after a value, holding a phrase of its own: "the Lapp villages (samebyar)", "Muret
#: (Haute-Garonne)", "the Social Insurance Authority (Zakład Ubezpieczeń Społecznych)"
_GLOSS = re.compile(r"[ \t]*\([ \t]*[“\"‘']?([^()\[\]\n“”\"‘’]{2,80}?)[”\"’']?[ \t]*\)")
_GLOSS_WORD = re.compile(r"\p{L}[\p{L}'’\-]*")


def foreign_gloss(phrase: str) -> bool:
    """A phrase English does not use: no word of three letters or more that English uses often (Zipf ≥ 4: "the
    Commission", "see below", "in Polish" are English), and most such words rare in English ("samebyar", "caisse
    primaire centrale d’assurance maladie", "Haute-Garonne"): the value before it again, in its own language."""
    words = [w for w in _GLOSS_WORD.findall(phrase) if len(w) >= 3]
    if not words or any(c.isdigit() for c in phrase):
        return False
    freq = [zipf(w.lower()) for w in words]
    return max(freq) < COMMON_WORD and sum(f < 3.0 for f in freq) * 3 >= len(freq) * 2


def _kind_glossed(s: Span) -> bool:
    """A public body of no specialised field ("the Warsaw Court of Appeal (Sąd Apelacyjny)", "the Ankara Martial Law
    Court"'s kind is kept): its gloss names its kind, which the rewrite keeps in English too; a specialised body's
    gloss says the field the rewrite hides ("the Social Insurance Authority (Zakład Ubezpieczeń Społecznych)")."""
    if s.entity != "ORGANIZATION":
        return False
    words = {w.lower() for w in _GLOSS_WORD.findall(s.text)}
    return bool(words & INSTITUTION_HEADS) and not words & SPECIALISED


def aliases(fields: list[TextField], spans: list[Span]) -> list[Span]:
    """A span's acronym, defined in parentheses right after it, is a span of the same type: the short name
    says what the long one said ("the EAT" later in the text names the same tribunal). So is a gloss in another
    language right after it ("the Lapp villages (samebyar)", "Muret (Haute-Garonne)"): kept beside the hidden
    value, it would say it again."""
    text_of = {f.path: f.text for f in fields}
    field_of = {f.path: f for f in fields}
    out = list(spans)
    for s in spans:
        text = text_of.get(s.path)
        if text is None or s.entity not in PROPAGATE or text[s.start:s.end] != s.text:
            continue
        m = _ALIAS.match(text, s.end)
        if m and sum(c.isupper() for c in m.group(1)) >= 2:
            out.append(_span(field_of[s.path], m.start(1), m.end(1), s.entity, s.score))
            continue
        g = _GLOSS.match(text, s.end)
        if g and foreign_gloss(g.group(1)) and not _kind_glossed(s):
            out.append(_span(field_of[s.path], g.start(1), g.end(1), s.entity, s.score))
    return out


def _own_jobs(fields: list[TextField]) -> frozenset[str]:
    """The one-word jobs the writer names as their own ("chef here", "as principal": self_disclosure.py)."""
    return frozenset(f.text[a:b].lower() for f in fields for a, b, entity, _ in self_disclosure.find(f.text)
                     if entity == "OCCUPATION" and " " not in f.text[a:b])


def propagate(fields: list[TextField], spans: list[Span]) -> list[Span]:
    """The spans plus every other occurrence of their values (and of person-name parts) in all fields; a
    courtesy title is part of the name after it (`titles`); an acronym or a gloss right after a span, found or
    propagated, is one (`aliases`)."""
    spans = aliases(fields, titles(fields, spans))
    own = _own_jobs(fields) if any(s.entity == "OCCUPATION" for s in spans) else frozenset()
    exact: dict[str, str] = {}  # lowercased value -> entity
    parts: dict[str, str] = {}  # name part (case-sensitive) -> entity
    for s in spans:
        v = s.text.strip()
        if len(v) < 2 or len(v) < 3 and not v.isupper() or s.entity not in PROPAGATE:
            continue
        if not s.direct and v.islower() and " " not in v and zipf(v) >= COMMON_WORD and v not in own:
            continue  # one ordinary lower-case word ("lawyer", "disability") found once is not that value everywhere,
            # unless the writer named it as their own job ("chef here"): then each "chef" tells it
        if v.isupper() and " " not in v and len(v) <= 8:
            parts.setdefault(v, s.entity)  # an acronym ("EAT", "PKK") only in capitals: "eat" is a word
            continue
        exact.setdefault(v.lower(), s.entity)
        if s.entity == "OCCUPATION" and is_livelihood(v):
            for w in _LOWER_WORD.findall(v):  # "reindeer herding" → "his reindeer", "the grazing": the same trade
                if len(w) > 3 and zipf(w.lower()) < COMMON_WORD:
                    exact.setdefault(w.lower(), s.entity)
        if s.entity in ("PERSON", "USERNAME"):
            for p in _NAME_PART.findall(v):
                if p.lower() not in TITLES and zipf(p.lower()) < 5.0:
                    parts.setdefault(p, s.entity)
    if not exact and not parts:
        return list(spans)
    out = list(spans)
    first = len(out)
    covered: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in spans:
        covered[s.path].append((s.start, s.end))
    pats = []
    if exact:
        pats.append(("i", tuple(sorted(exact, key=len, reverse=True))))
    if parts:
        pats.append(("c", tuple(sorted(parts, key=len, reverse=True))))
    for f in fields:
        for kind, values in pats:
            for a, b in _occurrences(f.text, values, kind == "i"):
                if any(x < b and a < y for x, y in covered[f.path]):
                    continue
                found = f.text[a:b]
                entity = exact.get(found.lower()) if kind == "i" else parts.get(found)
                if entity:
                    out.append(_span(f, a, b, entity, 0.7))
                    covered[f.path].append((a, b))
    # an occurrence found here has its gloss or acronym too ("the Swedish Sami villages (samebyar)")
    return out[:first] + aliases(fields, out[first:])


def _occurrences(text: str, values: tuple[str, ...], fold: bool):
    """(start, end) of each match of `values` in `text` as `finditer` of the alternation `|`.join(_bounded(v)) (in
    this order, case-insensitive with `fold`) yields them: the leftmost match, the first value in order that
    matches there, the search going on from its end. ASCII text and values are searched with str.find (the same
    matches: ASCII case folding, \\w = [A-Za-z0-9_]); anything else by the compiled pattern. Compiling that
    pattern was a third of a millisecond per request, for values that are new in almost every request."""
    if not (text.isascii() and all(v.isascii() for v in values)):
        yield from (m.span() for m in _alternation(values, fold).finditer(text))
        return
    hay = text.lower() if fold else text
    n = len(text)
    found = []
    for rank, v in enumerate(values):
        needle = v.lower() if fold else v
        lead, tail = v[:1].isalnum(), v[-1:].isalnum()
        i = hay.find(needle)
        while i >= 0:
            j = i + len(needle)
            if not (lead and i and _ascii_word(text[i - 1])) and not (tail and j < n and _ascii_word(text[j])):
                found.append((i, rank, j))
            i = hay.find(needle, i + 1)
    found.sort()
    pos = 0
    for i, _, j in found:
        if i >= pos:
            yield i, j
            pos = j


def _ascii_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@lru_cache(maxsize=256)
def _alternation(values: tuple[str, ...], fold: bool):
    return re.compile("|".join(_bounded(v) for v in values), re.I if fold else 0)


def merge(spans: list[Span]) -> list[Span]:
    """Overlapping spans of one field → one span over their union, typed by the longest member."""
    out: list[Span] = []
    by_path: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        if s.end > s.start:
            by_path[s.path].append(s)
    for group in by_path.values():
        group.sort(key=lambda s: (s.start, -s.end))
        cur: list[Span] = []
        end = -1
        for s in group + [None]:
            if s is not None and cur and s.start < end:
                cur.append(s)
                end = max(end, s.end)
                continue
            if cur:
                best = max(cur, key=lambda x: (x.end - x.start, x.direct, x.score))
                start = cur[0].start
                full = _full_text(cur, start, end)
                out.append(best.model_copy(update={"start": start, "end": end, "text": full,
                                                   "score": max(x.score for x in cur)}))
            if s is not None:
                cur, end = [s], s.end
    return sorted(out, key=lambda s: (s.path, s.start))


def _full_text(group: list[Span], start: int, end: int) -> str:
    """The text of a union span, rebuilt from its members (spans carry their own text, not the field's)."""
    first = group[0]
    if first.start == start and len(first.text) >= end - start:  # the first member covers the union (most do)
        return first.text[: end - start]
    chars: dict[int, str] = {}
    for s in group:
        for i, ch in enumerate(s.text):
            chars.setdefault(s.start + i, ch)
    return "".join(chars.get(i, " ") for i in range(start, end))
