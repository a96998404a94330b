"""Generalization of quasi-identifiers (L3 and up). Each rule coarsens a value by level:

| entity            | L3                                   | L4                        | L5                 |
|-------------------|--------------------------------------|---------------------------|--------------------|
| DATE              | a date or year → its decade ("31 May 1991" → "1990s": the year of a dated event is what the record of that event is found by); a duration's number → "several" ("three months" → "several months") | as L3 | [DATE]             |
| AGE               | 45 → "40-49"                         | [AGE]                     | [AGE]              |
| LOCATION          | "City, Country" → country; else [LOCATION]; a country stays | as L3  | [LOCATION]         |
| ORGANIZATION      | a named public body, school, hospital or prison loses its name, keeps its kind ("İzmir Labour Court" → "[LOCATION] Labour Court"), one named by its kind alone loses its field ("Ministry of Defence" → "Ministry of […]") or, with no field, stays ("Office of the University President"); else → its kind: "… Group" → "company", "Acme Clinic" → "hospital"; else [ORGANIZATION] | as L3 | a public body as L3; else [ORGANIZATION] |
| AMOUNT            | → order of magnitude: "EUR 5,443.70" → "EUR 1,000-10,000"; a country's adjective before the currency is dropped ("Turkish liras" → "liras") | [AMOUNT] | [AMOUNT] |
| QUANTITY          | the number → "several"               | as L3                     | [QUANTITY]         |
| CASE_NUMBER       | removed ("[…]")                      | removed                   | removed            |
| FAMILY            | counts dropped ("three kids" → "kids"); marital status ("single dad", "in a relationship" too) → [MARITAL_STATUS]; a parent's role ("mom of 2") → [FAMILY] | as L3 | [FAMILY] |
| NRP, OCCUPATION, MEDICAL_CONDITION, others | [TYPE]      | [TYPE]                    | [TYPE]             |
"""

from __future__ import annotations

import regex as re
from faker.providers.date_time import Provider as _DateTime

from ..institutions import INSTITUTION_HEADS, INSTITUTION_WORDS, SPECIALISED

#: country → continent (Faker's table plus common short forms)
CONTINENT = {c.name.lower(): c.continent for c in _DateTime.countries} | {
    k: "Europe" for k in ("uk", "united kingdom", "england", "scotland", "wales", "northern ireland", "britain",
                          "great britain", "russia", "czech republic", "czechia", "the netherlands", "holland",
                          "vatican", "türkiye", "turkey", "republic of turkey", "cyprus")
} | {k: "North America" for k in ("usa", "us", "united states", "united states of america", "america")} | {
    "south korea": "Asia", "north korea": "Asia", "ivory coast": "Africa"}
CONTINENTS = {"europe", "asia", "africa", "north america", "south america", "oceania", "antarctica"}
_YEAR = re.compile(r"(?<!\d)(1[6-9]\d\d|20\d\d)(?!\d)")
_NUM = re.compile(r"\d[\d,.' ]*\d|\d")
_NUMWORD = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
                      r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
                      r"ninety|hundred|thousand|million|billion|a couple of|a few|a dozen|dozens of|trio of|pair of|"
                      r"couple of)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?\b", re.I)
_MARITAL = re.compile(r"\b(?:married|divorced|widowed|widow|widower|separated|engaged|remarried|single|lone|"
                      r"relationship)\b", re.I)
#: a parent's role ("mom of 2", "father of three", "dad to 3"): the person's own family status, not a count of others
_PARENT = re.compile(r"\b(?:moms?|mums?|dads?|mothers?|fathers?|parents?|mama|papa)\b", re.I)
_ORG_KIND = [
    (re.compile(r"\b(court|tribunal)s?\b", re.I), None),
    (re.compile(r"\b(ministry|department|directorate|agency|authority|office|bureau|board|commission|committee|council"
                r"|municipality|government|service)\b", re.I), None),
    (re.compile(r"\b(university|college|academy|school|institute)\b", re.I), None),
    (re.compile(r"\b(hospital|clinic|clinique|pharmacy)\b", re.I), "hospital"),
    (re.compile(r"\b(prison|police|gendarmerie|army|brigade|regiment|battalion|command|station)\b", re.I), None),
    (re.compile(r"\b(party|union|federation|association|society|foundation|fund|trust|church)\b", re.I), None),
    (re.compile(r"\b(bank)\b", re.I), None),
    (re.compile(r"\b(newspaper|magazine|press|radio|television)\b", re.I), None),
    (re.compile(r"\b(inc|ltd|llc|plc|gmbh|ag|corp|corporation|company|group|partners|associates|holdings|industries"
                r"|enterprises|solutions|technologies|systems|store|shop|cafe|restaurant|hotel|network|labs|studios?"
                r"|consulting|ventures|logistics|market|mall|factory|works|mills|sons)\b\.?", re.I), "company"),
]
_LAW_FIRM = re.compile(r"^\p{Lu}[\p{L}'’-]+,\s+\p{Lu}[\p{L}'’-]+,?\s+(?:and|&)\s+\p{Lu}[\p{L}'’-]+$")

REMOVED = "[…]"


def tag(entity: str) -> str:
    return f"[{entity}]"


def _magnitude(num: str) -> str:
    digits = num.replace(",", "").replace("'", "").replace(" ", "").split(".")[0]
    n = len(digits.lstrip("0")) or 1
    lo, hi = 10 ** (n - 1), 10 ** n
    return f"{lo:,}-{hi:,}" if n > 1 else "1-10"


_DURATION = re.compile(r"(?i)^(?:(?:about|approximately|almost|nearly|over|more\s+than|less\s+than|at\s+least|some|"
                       r"up\s+to|within|for|the)\s+)*(?:\d+(?:[.,]\d+)?|[a-z]+(?:[\s-](?:and\s+a\s+half|[a-z]+))?)"
                       r"[\s-](?:years?|months?|weeks?|days?|hours?|minutes?)(?:[’']s?)?(?:\s+(?:old|of\s+age))?$")


def date(value: str, level: int) -> str:
    years = _YEAR.findall(value)
    if level < 5 and not years and _DURATION.match(value.strip()):
        out = _NUMWORD.sub("several", _NUM.sub("several", value))  # "three months" → "several months"
        if out != value:
            return re.sub(r"several(?:[\s-]+several|\s+and\s+a\s+half)+", "several", out)
    if level >= 5 or not years:
        return tag("DATE")
    return years[-1][:3] + "0s"


def age(value: str, level: int) -> str:
    m = re.search(r"\d{1,3}", value)
    if level >= 4 or not m:
        return tag("AGE")
    n = int(m.group())
    lo = n // 10 * 10
    return value[: m.start()] + f"{lo}-{lo + 9}" + value[m.end():]


def location(value: str, level: int) -> str:
    """A country (or "city, country") → its continent; a continent stays; anything else → [LOCATION]."""
    if level >= 5:
        return tag("LOCATION")
    v = value.strip().lower().removeprefix("the ")
    if v in CONTINENTS:
        return value
    last = v.rsplit(",", 1)[-1].strip()
    for key in (v, last):
        if key in CONTINENT:
            return CONTINENT[key]
    return tag("LOCATION")


#: a body's head word among the public bodies' vocabulary, or a place of study, care or detention: a body with
#: one of these is named by its place ("Warsaw", "Klagenfurt") and its kind ("Regional Court", "University")
_BODY_HEADS = INSTITUTION_HEADS | {"university", "college", "academy", "school", "institute", "hospital", "clinic",
                                   "prison", "prisons", "directorate", "inspector", "inspectorate", "office"}
_KIND = INSTITUTION_HEADS | INSTITUTION_WORDS | SPECIALISED | _BODY_HEADS | {
    "of", "the", "for", "and", "&", "de", "du", "la", "le", "des", "to", "in", "on", "at", "a", "an", "its", "first",
    "f-type", "e-type", "open", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
    "nineteenth", "twentieth", "closed", "city", "town", "village", "province", "provincial", "state’s", "state's"}
_BODY_WORD = re.compile(r"\p{L}[\p{L}'’\-]*|\d+(?:st|nd|rd|th)?")


_LAWS = {"act", "acts", "law", "laws", "code", "protocol", "charter", "treaty", "constitution", "convention", "rules"}


def _named_body(value: str) -> str | None:
    """A public body, school, hospital or prison with its name: the name (the words that are not the body's
    kind, rank or field) → [LOCATION], the rest kept ("İzmir State Security Court" → "[LOCATION] State Security
    Court", "Governor of Sztum Prison" → "Governor of [LOCATION] Prison"); one named by its kind alone loses its
    field ("Supreme Military Administrative Court" → "Supreme […] Administrative Court", "Ministry of Defence" →
    "Ministry of […]"); None when it is neither."""
    words = list(_BODY_WORD.finditer(value))
    low = [m.group().lower().removesuffix("’s").removesuffix("'s") for m in words]
    if not any(w in _BODY_HEADS for w in low):
        return None
    name = [i for i, w in enumerate(low) if w not in _KIND and not words[i].group()[:1].isdigit()]
    # a law's name says what it governs, not where ("German Unification Treaty" → "[…] Treaty"); a body's is its place
    marker = REMOVED if [w for w in low if w in _BODY_HEADS][-1] in _LAWS else tag("LOCATION")
    if not name:  # named by its kind alone: its field is what says what the affair was about
        name = [i for i, w in enumerate(low) if w in SPECIALISED and w not in _BODY_HEADS]
        marker = REMOVED
        if not name:  # its kind alone ("the Office of the University President"): it names no one, it stays
            return value
    if len(name) == len(words):
        return None
    out, pos, i = [], 0, 0
    while i < len(words):
        if i not in name:
            i += 1
            continue
        j = i
        while j + 1 < len(words) and j + 1 in name:
            j += 1
        out += [value[pos: words[i].start()], marker]
        pos = words[j].end()
        i = j + 1
    return "".join(out) + value[pos:]


def organization(value: str, level: int) -> str:
    """See the table. A public body keeps its kind at every level, L5 included: "Regional Court", "Ministry of"
    say what any case of its kind says, while its name ([LOCATION]) and its field ([…]) are what would tell the
    person's affair; everything else is [ORGANIZATION] at L5."""
    named = _named_body(value)
    if named is not None:
        return named
    if level >= 5:
        return tag("ORGANIZATION")
    if _LAW_FIRM.match(value.strip()):
        return "company"
    for pat, kind in _ORG_KIND:
        found = list(pat.finditer(value))
        if found:
            return kind or found[-1].group(1).lower()
    return tag("ORGANIZATION")


#: a country's adjective before a currency's name ("Turkish liras", "New Turkish Liras", "Polish zlotys"): it says the
#: country as a nationality would; the currency's own name (and code) says what the sum is counted in
_CURRENCY_COUNTRY = re.compile(r"\b(?:New\s+)?\p{Lu}\p{Ll}+(?:ish|ian|ean|ese|ic|i|an|ch|ot)\s+(?=\p{L})")


def amount(value: str, level: int) -> str:
    """L3: the order of magnitude, the currency kept without a country's adjective ("12,355.61 Turkish liras (TRY)" →
    "10,000-100,000 liras (TRY)"): a country is generalized at L3 (`location`), so is the one a currency names."""
    m = _NUM.search(value)
    if level >= 4 or not m:
        return tag("AMOUNT")
    head = value[: m.start()].strip()
    for w in ("approximately", "approx.", "about", "some", "around", "over", "nearly", "almost"):
        head = head.removeprefix(w).strip()
    tail = _CURRENCY_COUNTRY.sub("", value[m.end():].strip())
    head = _CURRENCY_COUNTRY.sub("", head)
    rng = _magnitude(m.group())
    return " ".join(p for p in (head, rng, tail) if p)


def quantity(value: str, level: int) -> str:
    if level >= 5 or "%" in value or "per cent" in value.lower() or "percent" in value.lower():
        return tag("QUANTITY")
    out = _NUM.sub("several", value)
    out = _NUMWORD.sub("several", out)
    return out if out != value else tag("QUANTITY")


def family(value: str, level: int) -> str:
    if level >= 5:
        return tag("FAMILY")
    if _MARITAL.search(value):
        return tag("MARITAL_STATUS")
    # a parent's role says the person's own family status as the count did ("mom of 2" → [FAMILY], "dad to 3 amazing
    # kids" → "[FAMILY] to amazing kids"); the children's count is dropped ("three kids" → "kids")
    value = _PARENT.sub(tag("FAMILY"), value)
    out = re.sub(r"\s{2,}", " ", _NUMWORD.sub("", re.sub(r"\d+", "", value))).strip()
    out = re.sub(r"^(?:of\s+)", "", out)
    out = re.sub(r"\s+(?:of|to)$", "", out)
    return out if out and out.lower() not in ("my", "our") else tag("FAMILY")


RULES = {"DATE": date, "DATE_TIME": date, "AGE": age, "LOCATION": location, "ORGANIZATION": organization,
         "AMOUNT": amount, "QUANTITY": quantity, "FAMILY": family}


def generalize(value: str, entity: str, level: int) -> str:
    """A coarser stand-in for a quasi-identifier at level 3, 4 or 5."""
    if entity == "CASE_NUMBER":
        return REMOVED
    rule = RULES.get(entity)
    return rule(value, level) if rule else tag(entity)
