"""Identifying residue in a text: what an adversary could still use after a rewrite.

One scanner serves three callers: the deterministic guesser (on the rewritten text), L4's suppression of
rare identifying tokens and L5's sentence fallback (on the original text outside the located spans).
Each cue has a confidence that says how much it narrows down a person:

| cue      | what                                                           | confidence            |
|----------|----------------------------------------------------------------|-----------------------|
| contact  | an e-mail, a @handle, a long digit run                          | 0.95                  |
| mask     | the visible part of a partial mask (`j***@acme.com` → acme.com) | 0.65 (digits 0.6)     |
| date     | a full date / month and year / a bare year / a decade, not a    | 0.85 / 0.65 / 0.45 / 0.2 |
|          | law's date ("the 1998 Act", the day a law came into force)      |                       |
| code     | a number with / or letters and digits (file, plot, case no.),   | 0.85                  |
|          | not a number and its unit ("60-day", "192-page"), not another   |                       |
|          | case's number in a citation ("X v. Turkey ((dec.), no. 45874/05")|                       |
| number   | 3+ digits outside legal references (Article 6 § 1); a plot's,   | 0.6                   |
|          | building's or flat's number ("plot no. 937") is no reference    |                       |
| rare     | a capitalised word or acronym by English word frequency (Zipf), | <2: 0.85, <3: 0.7, <3.8: 0.45 |
|          | not a public body's or office's vocabulary ("Freedoms",         |                       |
|          | "Cassation", "Procurator",                                      |                       |
|          | "Assize", a possessive "Ministry’s"), not a currency ("PLN",    |                       |
|          | "Liras"), not a body's name in its own language glossed in     |                       |
|          | parentheses after a body named by its kind, with no field      |                       |
|          | ("the Court of Appeal (Sąd Apelacyjny)"), nor a law's name or a |                       |
|          | legal term glossed so where the term is not hidden ("the Motor  |                       |
|          | Vehicles Act (Kraftfahrgesetz)", "partial judgment (wyrok        |                       |
|          | częściowy)", any lower-case term glossed in a phrase of another  |                       |
|          | language: "a system of compensation (dualer Familienlastenaus-   |                       |
|          | gleich)"); an acronym or one capitalised word stays a cue        |                       |
| rare_low | a lower-case word English almost never uses (Zipf < 1, 6+ chars) | 0.4                  |

A word of a public scheme's name ("Widow’s Bereavement Allowance", "a Bereavement Payment") is no rare word: the
scheme is named the same for anyone it pays; nor is a kind of identifier's name before its value ("IBAN GB41…"). Text inside square brackets (placeholders, `[…]`) is never residue.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

import regex as re

from ..citations import cited
from ..currencies import CURRENCY_CODES, CURRENCY_WORDS
from ..institutions import INSTITUTION_HEADS, INSTITUTION_WORDS, SPECIALISED, law_date
from ..offices import OFFICE_TITLES
from .spans import zipf

MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|"
          "jun|jul|aug|sep|sept|oct|nov|dec")
_TOKEN = re.compile(
    r"(?P<contact>[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?<![\w@])@[A-Za-z0-9_][\w.]*\w|\+?\d[\d\s().-]{7,}\d)"
    r"|(?P<mask>[\w.-]*[*•]{2,}(?:@[\w-]+(?:\.[\w-]+)+|[\w.-]*)(?:\s\d{2,})?)"
    rf"|(?P<date>\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{MONTHS})\.?,?\s+\d{{4}}\b|\b(?:{MONTHS})\.?\s+\d{{1,2}},?\s+\d{{4}}\b"
    rf"|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b(?:{MONTHS})\.?,?\s+\d{{4}}\b|(?<![\w/.§])(?:1[6-9]\d\d|20\d\d)s?(?![\w/]))"
    r"|(?P<code>\b\d+(?:/\d+)+\b|\b(?!\d+(?:st|nd|rd|th|s)\b)(?!\d+-(?:years?|months?|weeks?|days?|hours?|minutes?|"
    r"page|member|storey|hectare|metre|meter|kilometre|kilometer|mile|point|man|person|strong)(?:-old)?\b)(?=[A-Za-z-]*\d)(?=[\d-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b)"
    r"|(?P<number>\b\d[\d,.]*\d\b)"
    r"|(?P<word>\p{L}[\p{L}'’\-]*\p{L}|\p{L})",
    re.I,
)
_BRACKETS = re.compile(r"\[[^\[\]\n]{0,60}\]")
_LEGAL = re.compile(r"(?i)(?:art(?:icle)?s?\.?|rules?|protocols?|§|para(?:graph)?s?\.?|sections?|chapters?|pages?|pp?\.|"
                    r"items?|points?|acts?|laws?|codes?|vol(?:ume)?\.?|series|annex|appendix|schedule|nos?\.?|"
                    r"numbers?|and|to|or|-|–|,)\s*$")
#: "plot no. 937", "located at no. 128": the number of a piece of land, a building or a flat is an address,
#: not a legal reference
#: a connector ("5-7", "6 and 13") continues a legal reference only when a reference word precedes it: in
#: "Kraków, 31-900" the hyphen joins the parts of a postal code
_CONNECTOR = re.compile(r"(?i)(?:\band|\bto|\bor|-|–|,)\s*$")
_LEGAL_WORD = re.compile(r"(?:(?i:\b(?:art(?:icle)?s?\.?|rules?|protocols?|para(?:graph)?s?\.?|sections?|chapters?|"
                         r"pages?|pp?\.|items?|points?|acts?|laws?|codes?|vol(?:ume)?\.?|series|annex|appendix|"
                         r"schedule|nos?\.?|numbers?))|§)(?:[\d\s,§().–-]|\band\b|\bor\b|\bto\b)*$")
_PROPERTY_NO = re.compile(r"(?i)\b(?:plots?|parcels?|lots?|blocks?|flats?|apartments?|houses?|buildings?|rooms?|"
                          r"sheets?|maps?|at|located)\s+nos?\.\s*$")
_SENT_START = re.compile(r"(?:^|[\n.!?:;•\-–—(“\"']\s*)\s*$")


_BODY_VOCABULARY = frozenset(INSTITUTION_HEADS | INSTITUTION_WORDS | OFFICE_TITLES)

@dataclass(frozen=True)
class Cue:
    start: int
    end: int
    kind: str
    value: str  # what an adversary would guess from it
    confidence: float


def _merged(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Sorted, disjoint ranges as (starts, ends), so `_inside` is a binary search, not a scan per token."""
    starts: list[int] = []
    ends: list[int] = []
    for x, y in sorted(ranges):
        if starts and x <= ends[-1]:
            ends[-1] = max(ends[-1], y)
        else:
            starts.append(x)
            ends.append(y)
    return starts, ends


def _inside(merged: tuple[list[int], list[int]], a: int, b: int) -> bool:
    """Does [a, b) overlap one of the merged ranges? (the last range starting before b has the largest end)"""
    starts, ends = merged
    i = bisect_left(starts, b) - 1
    return i >= 0 and ends[i] > a


# compiled once: the module-level `re.sub(pattern, …)` looks its pattern up in regex's cache on every call
_DECADE = re.compile(r"\d{3}0s")
_YEAR = re.compile(r"\d{4}")
_DAY_OR_MONTH = re.compile(r"\d{1,2}")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORD_OR_SIGN = re.compile(r"\p{L}[\p{L}'’\-]*|\S")
_GLOSS_WORD = re.compile(r"\w[\w'’-]*")
_MASK_RUN = re.compile(r"[*•]+")
_TWO_DIGITS = re.compile(r"\d{2,}")
_DIGITS = re.compile(r"\d+")


def _date_conf(v: str) -> float:
    low = v.lower()
    if _DECADE.fullmatch(low):
        return 0.2
    if _YEAR.fullmatch(low):
        return 0.45
    if _DAY_OR_MONTH.search(_YEAR.sub("", low)) or _ISO_DATE.fullmatch(low):
        return 0.85
    return 0.65
#: a currency's code or name says what a sum is counted in ("TRL", "Liras", "PLN"), never whose it is
_CURRENCY = re.compile(rf"(?i)(?:{CURRENCY_CODES}|{CURRENCY_WORDS})")
#: a parenthesis right after a public body named by its kind alone ("the Court of Appeal (", "the Constitutional
#: Court (“"): what it holds is that body's name in its own language ("Sąd Apelacyjny", "Verfassungsgerichtshof"),
#: which says no more than the English did. A body with a name ("the Warsaw Regional Court (Sąd Okręgowy w
#: Warszawie)") is not such a body: its gloss can hold the place
_GLOSS_BEFORE = re.compile(r"((?:\p{L}[\p{L}'’\-]*[ \t]+){1,6})$")
_GLUE = {"of", "the", "for", "and"}


def _body_gloss(text: str, a: int) -> bool:
    """Is the word at `a` inside a parenthesised gloss that follows a body named by its vocabulary alone? Read
    back from the parenthesis over the body's words ("Court of Appeal"); a capitalised word right before them that
    is not one ("Warsaw Regional Court") is the body's name."""
    opened = text.rfind("(", max(0, a - 60), a)
    if opened < 0 or ")" in text[opened:a] or "\n" in text[opened:a]:
        return False
    words = _WORD_OR_SIGN.findall(text[max(0, opened - 80): opened])
    body: list[str] = []
    while words and (words[-1].lower() in _BODY_VOCABULARY or words[-1].lower() in _GLUE):
        body.append(words.pop().lower())
    named = bool(words) and words[-1][:1].isupper() and (not body or body[-1] != "the")
    # a specialised body's gloss says its field again ("the Social Insurance Authority (Zakład Ubezpieczeń
    # Społecznych)"), which generalize.py hides in the English name: it stays residue
    return not named and any(w in INSTITUTION_HEADS for w in body) and not any(w in SPECIALISED for w in body)


#: a law's name or a legal term right before a parenthesis ("the Motor Vehicles Act (Kraftfahrgesetz)", "a partial
#: judgment (wyrok częściowy)", "an objection (Einspruch)"): the parenthesis glosses it in its own language
_TERM_GLOSSED = re.compile(r"(?i)\b(?:act|acts|code|law|laws|regulations?|ordinance|decree|statute|constitution|"
                           r"treaty|appeal|complaint|decision|order|judgment|ruling|request|objection|procedure|"
                           r"allowance|benefit|pension|fund|scheme|fee|gazette|register|certificate|permit|licence|"
                           r"notice|warrant|summons|indictment|sentence|penalty|fine|offence|status|right|rights)"
                           r"(?:[ \t]+(?:\d{4}|no\.[ \t]*\d+))?[ \t]*\([ \t]*[“\"‘']?$")
#: a lower-case English word right before a parenthesis: the term a gloss in another language may follow
_LOWER_TERM = re.compile(r"\b(\p{Ll}[\p{L}\-]+)[ \t]*\([ \t]*[“\"‘']?$")
#: a body's name ends in such a word ("the Gdańsk Court of Appeal ("): its gloss is the body's (`_body_gloss`)
_BODY_OF = re.compile(r"(?i)\b(?:court|tribunal|chamber|board|committee|commission|council|office|authority)s?\s+of\s+"
                      r"(?:the\s+)?\p{L}+[ \t]*\($")


#: a noun for a person or a place: what follows it in parentheses is their name ("his neighbour (Kowalski)", "the
#: town (Kahramanmaraş)"), no gloss
_NAMES_WHO_OR_WHERE = {"son", "sons", "daughter", "daughters", "wife", "husband", "child", "children", "father",
                       "mother", "brother", "sister", "parent", "parents", "partner", "neighbour", "neighbor", "friend",
                       "cousin", "uncle", "aunt", "village", "town", "city", "district", "region", "province", "county",
                       "street", "road", "area", "place", "country", "company", "firm", "employer", "person", "man",
                       "woman", "witness", "victim", "doctor", "lawyer", "officer", "judge"}


@lru_cache(maxsize=1)
def _person_names() -> frozenset[str]:
    from faker.providers.person.en_US import Provider

    return frozenset(n.lower() for n in (*Provider.first_names, *Provider.last_names))


_PARTICLES = {"della", "delle", "degli", "dello", "bint", "ibn"}


def _foreign_phrase(words: list[str]) -> bool:
    """A phrase of another language, not a name: no word English uses (but a short particle), a lower-case word
    that is no name's particle ("wyrok częściowy", "dualer Familienlastenausgleich", "munzam zarar"), and no word a
    person's name. A single capitalised word ("(Sonderabgabe)", "(Kowalski)") may be a name: it stays a cue."""
    if not words or any(zipf(w.lower()) >= 3.0 and len(w) > 3 for w in words):
        return False
    if any(w.lower() in _person_names() for w in words):
        return False
    return any(w[:1].islower() and len(w) > 3 and w not in _PARTICLES for w in words)


def _term_gloss(text: str, a: int, hidden: tuple[list[int], list[int]]) -> bool:
    """Is the word at `a` inside a parenthesis that glosses a law's name or a legal term in its own language (or any
    lower-case term, when the parenthesis holds only words English does not use), where that term is not hidden? The gloss says what the English words before it say: when they stay, it stays;
    when they are hidden ("the […] Act"), so is the gloss."""
    opened = text.rfind("(", max(0, a - 60), a)
    if opened < 0 or ")" in text[opened:a] or "\n" in text[opened:a]:
        return False
    base = max(0, opened - 40)
    m = _TERM_GLOSSED.search(text, base, opened + 1)
    if m is None:
        m = _LOWER_TERM.search(text, base, opened + 1)  # "a special levy (Sonderabgabe)", "bias (Ablehnungsantrag)"
        close = text.find(")", a)
        if m is None or zipf(m.group(1)) < 3.0 or m.group(1).lower() in _NAMES_WHO_OR_WHERE or close < 0 or \
                close - a > 120 or not _foreign_phrase(_GLOSS_WORD.findall(text[opened + 1: close])):
            return False
    if _BODY_OF.search(text, max(0, opened - 60), opened + 1):
        return False
    term = m.start()
    return not _inside(hidden, term, opened)


#: the rest of a public scheme's name after a word of it ("Widow’s| Bereavement Allowance", "Bereavement| Payment"):
#: what the law pays, named the same for anyone it pays, like a law's name
_SCHEME_NAME = re.compile(r"(?:[’']s)?(?:[ \t]+\p{Lu}[\p{L}’'\-]*){0,3}?[ \t]+(?:Allowances?|Benefits?|Pensions?|"
                          r"Payments?|Credits?|Schemes?|Grants?|Supplements?)\b(?![ \t]+\p{Lu})")


#: the name of a kind of identifier right before its value ("IBAN GB41…", "SSN 123-…", "VAT no. DE…"): it says what
#: the value is, which any value of its kind says; the value itself is hidden or is the cue
_ID_KINDS = frozenset({"iban", "bic", "swift", "ssn", "itin", "ein", "tin", "vat", "nhs", "nino", "pin", "imei",
                       "iccid", "mrn", "npi", "dob", "id"})
_VALUE_AFTER = re.compile(r"[ \t]*(?:[:#]|no\.|number)?[ \t]*(?:\[|[\w-]*\d)")


def _word_conf(text: str, a: int, w: str) -> tuple[str, float] | None:
    if len(w.removesuffix("’s").removesuffix("'s")) < 2:
        return None  # one letter ("X’s refutation"): an initial or the text's own anonymisation, no rare word
    low = w.lower()
    caps = w[0].isupper()
    acronym = w.isupper() and 2 <= len(w) <= 6
    if caps or acronym:
        z = zipf(low)
        stem = low.removesuffix("’s").removesuffix("'s")
        if stem in _BODY_VOCABULARY or _CURRENCY.fullmatch(stem):
            return None  # "Fundamental Freedoms", "Cassation", "Ministry’s": what a public body is, not who; a currency
        if _body_gloss(text, a):
            return None  # "(Sąd Apelacyjny)" after "the Court of Appeal": the same body, named in its language
        if _SCHEME_NAME.match(text, a + len(w)):
            return None  # "Widow’s Bereavement Allowance": a public scheme's name, the same for anyone it pays
        if low in _ID_KINDS and _VALUE_AFTER.match(text, a + len(w)):
            return None  # "IBAN GB55ZZZZ…": the kind of the value after it, no one's name
        initial = _SENT_START.search(text[max(0, a - 3): a]) is not None or a == 0
        if initial and z >= 2.0:
            return None
        if z < 2.0:
            return "rare", 0.85
        if z < 3.0:
            return "rare", 0.7
        if z < 3.8:  # an acronym in this band ("PKK") is hidden at L5 like a rarer capitalised word
            return "rare", 0.45
        return None
    if len(w) >= 6 and zipf(low) < 1.0:
        return "rare_low", 0.4
    return None


def scan(text: str, skip: list[tuple[int, int]] | None = None, min_confidence: float = 0.0) -> list[Cue]:
    """Residue cues in `text`, outside `skip` ranges and square-bracket placeholders."""
    skip = list(skip or []) + [m.span() for m in _BRACKETS.finditer(text)]
    merged = _merged(skip)
    out: list[Cue] = []
    for m in _TOKEN.finditer(text):
        a, b = m.span()
        if skip and _inside(merged, a, b):
            continue
        kind = m.lastgroup
        v = m.group()
        if kind == "contact":
            out.append(Cue(a, b, kind, v, 0.95))
        elif kind == "mask":
            visible = _MASK_RUN.sub(" ", v).strip(" .-")
            if "@" in v:
                out.append(Cue(a, b, kind, v.split("@", 1)[1], 0.65))
            elif _TWO_DIGITS.search(visible):
                out.append(Cue(a, b, kind, _DIGITS.findall(visible)[-1], 0.6))
            elif len(visible) >= 3:
                out.append(Cue(a, b, kind, visible, 0.5))
        elif kind == "date":
            if not law_date(text, a, b):  # "the 1998 Act", a date a law came into force: no one's date
                out.append(Cue(a, b, kind, v, _date_conf(v)))
        elif kind == "code":
            if not cited(text, a):  # another case's application number is public case law (citations.py)
                out.append(Cue(a, b, kind, v, 0.85))
        elif kind == "number":
            before = text[max(0, a - 30): a]
            legal = _LEGAL.search(before[-14:]) is not None
            if legal and _CONNECTOR.search(before[-14:]) and not _LEGAL_WORD.search(before):
                legal = False
            if sum(c.isdigit() for c in v) >= 3 and (not legal or _PROPERTY_NO.search(before)):
                out.append(Cue(a, b, kind, v, 0.6))
        elif a > 0 and text[a - 1] == "#":
            continue  # a hashtag is a topic, not a name
        else:
            if not (v.isupper() and len(v) > 1) and _term_gloss(text, a, merged):
                continue  # "the Motor Vehicles Act (Kraftfahrgesetz)": the term again, in its own language
            wc = _word_conf(text, a, v)
            if wc:
                out.append(Cue(a, b, wc[0], v, wc[1]))
    return [c for c in out if c.confidence >= min_confidence]
