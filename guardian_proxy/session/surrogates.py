"""Surrogates of the same type and format, generated locally with Faker (en_US).

PERSON: each name part maps to a surrogate part kept for the session ("John Doe" → "Alex Smith",
"Mr. Doe" → "Mr. Smith", "John" → "Alex"); titles, initials and suffixes keep their shape. A given name that
Faker's name lists know as only a woman's or only a man's gets a stand-in of the same (a model that reads "my
daughter Jonathan" answers with "he", and the de-masked reply says "Emma … he"); a title (Mrs, Mr) decides where
the name is unknown. E-mail local
parts built from known names follow them (john.doe@… → alex.smith@example.net). Format-bound values come
from `guardian_proxy.standins`, the one source both surrogate makers use, and no one can hold them: e-mails
on example.com/.net/.org, phones in fiction ranges (555-01xx, 07700 900xxx), test-BIN Luhn cards, SSNs in the
never-issued area 9xx, IBANs on a zero bank code with valid check digits, IPs in the documentation ranges
(RFC 5737 / RFC 3849); UUIDs stay valid UUIDs, IDs, keys and account-like values keep their length, alphabet
(hex stays hex) and prefix; dates stay valid dates in their format; amounts are scaled by 0.75–1.3 and keep
their rounding; ages move by 1–5 years; cities, states, countries, organisations, conditions and medications
come from Faker or small lists. A type with no generator gets a numbered placeholder (`[NARRATIVE_1]`),
which de-masks as reliably as a surrogate.

A composite street address ("889 Sample Road, San Francisco, CA 94102") gets a stand-in of the same shape
("4521 Howard Squares, Lake Jennifer, TX 35021"): `address_parts` cuts it into its street line, city, state and
postcode, and each part's stand-in is that part of the composite's, so the parts held apart (a tool call's
`address.street`, `address.city`) are replaced by the same stand-in's parts (session/stage.py `_surrogates`).

`avoid(candidate)` rejects candidates that collide with a real value of the conversation or another
surrogate; up to 24 seeds are tried.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable

from .. import standins
from ..person_names import WORLD, faker_names

#: titles that say a person's sex
#: titles, English and the usual European ones ("Frau Katharina Vogel", "Mme Dupont", "Sra. Fernández"): a
#: stand-in keeps them, and they say the person's sex
WOMEN_TITLES = frozenset({"mrs", "ms", "miss", "madam", "dame", "lady", "frau", "madame", "mme", "mlle",
                          "mademoiselle", "señora", "sra", "señorita", "srta", "signora", "senhora", "mevrouw",
                          "mevr", "pani", "bayan", "sayın", "dona", "doña",
                          # a family's word written as a title ("Aunty Ngozi Eze", "Auntie Patricia", "Nan Rose")
                          "aunty", "auntie", "aunt", "nan", "nana", "grandma", "granny", "gran"})
MEN_TITLES = frozenset({"mr", "sir", "lord", "herr", "herrn", "monsieur", "señor", "sr", "signor", "sig", "senhor", "meneer",
                        "dhr", "pan", "bay", "don", "uncle", "grandpa", "grandad", "granddad", "grampa"})
_TITLES = {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "madam", "dame", "lord", "lady", "rev", "nurse", "cousin",
           # "Familie Brandstätter": the family's word stays, its surname gets a surname's stand-in
           "familie", "famille", "familia", "famiglia", "família", "rodzina"} | WOMEN_TITLES | MEN_TITLES
#: a family's words written as titles: the one word after them is a given name
KIN_TITLES = frozenset({"uncle", "aunty", "auntie", "aunt", "nan", "nana", "grandma", "granny", "gran", "grandpa",
                        "grandad", "granddad", "grampa", "cousin"})
#: every title a name may carry, read by the session's name rules too (a title is never cut off a name)
TITLES = frozenset(_TITLES)
_SUFFIXES = {"jr", "sr", "ii", "iii", "iv", "phd", "md"}
#: name parts that are also everyday English words: never used as a surrogate part (de-masking must not
#: mistake "will" or "Hope" in a reply for a name)
_COMMON = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours out over own same she should so some such than that the their theirs them then there
these they this those through to too under until up very was we were what when where which while who whom why
with would you your yours yourself will may mark grace hope joy faith rose june april august bill frank rich sue
summer dawn page young king long white black brown green hill wood rice ray lee art bob ken miles hunter chase
case cash price gay love free major north south west east lane park street house rock stone field ford bell
""".split())
_CONDITIONS = ["asthma", "migraine", "hypertension", "psoriasis", "eczema", "hypothyroidism", "gout",
               "anemia", "sleep apnea", "tinnitus", "celiac disease", "osteoarthritis", "sciatica", "rosacea"]
_MEDICATIONS = ["lisinopril", "atorvastatin", "levothyroxine", "omeprazole", "amlodipine", "metoprolol",
                "losartan", "sertraline", "montelukast", "gabapentin", "cetirizine", "albuterol"]
_NRP = ["Canadian", "Norwegian", "Portuguese", "Chilean", "Australian", "Dutch", "Irish", "Austrian", "Belgian"]
_NUM = re.compile(r"\d[\d,]*(?:\.\d+)?")
_NAME_PART = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
#: entity types whose values are scrambled in place (format kept) rather than drawn from Faker
SCRAMBLE = {"CASE_NUMBER", "US_ITIN", "US_PASSPORT", "US_DRIVER_LICENSE", "UK_NHS", "MEDICAL_LICENSE",
            "GOVERNMENT_ID", "CRYPTO", "PASSWORD", "API_KEY", "AUTH_TOKEN", "PRIVATE_KEY", "SESSION_ID",
            "ADVERTISING_ID", "DEVICE_ID", "ACCOUNT_NUMBER", "US_BANK_NUMBER", "IBAN_CODE", "CREDIT_CARD", "US_SSN"}


#: a digit said as a word, as dictation writes a phone number ("oh eight seven three …")
SPOKEN_DIGIT = re.compile(r"(?i)\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b")
_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def spoken_digits(value: str, rng: random.Random) -> str:
    """A number said in words gets another said in words, digit for digit ("plus", "double" stay)."""
    return SPOKEN_DIGIT.sub(lambda m: standins.case_like(rng.choice(_DIGIT_WORDS), m.group(0)), value)


def postcode(value: str, rng: random.Random) -> str:
    """A postcode's stand-in: a digit for each digit, a letter for each letter ("B10 0AE" → "K47 3TR"; a hex-looking
    one must not turn a letter's place into a digit's)."""
    return "".join(str(rng.randrange(10)) if c.isdigit() else
                   chr(rng.randrange(26) + (65 if c.isupper() else 97)) if c.isascii() and c.isalpha() else c
                   for c in value)


def scramble(value: str, rng: random.Random, keep_prefix: bool = True) -> str:
    """Same layout: digits → digits, hex → hex, letters → letters of the same case, a UUID stays a valid UUID;
    a short prefix like `sk-` stays (`standins.shaped`)."""
    return standins.shaped(value, rng, keep_prefix)


def _scale_number(tok: str, factor: float) -> str:
    plain = tok.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    x = float(plain) * factor
    if decimals == 0:
        whole = plain.split(".")[0]
        zeros = len(whole) - len(whole.rstrip("0")) if whole.strip("0") else 0
        step = 10 ** min(zeros, max(0, len(whole) - 1))
        n = max(step, int(round(x / step)) * step)
        return f"{n:,}" if "," in tok else str(n)
    return f"{x:,.{decimals}f}" if "," in tok else f"{x:.{decimals}f}"


#: the types whose values can be a composite street address
ADDRESS_TYPES = frozenset({"STREET_ADDRESS"})
_SEG = re.compile(r"[^,\n]+")
_STREET = re.compile(r"^(?=.*\d)(?=.*[^\W\d_]{2})[\w .'’#/-]{3,80}$")
_CITY = re.compile(r"^[^\W\d_]+(?:[ .'’-]+[^\W\d_]+)*\.?$")
#: the last segment: an optional region (state, province, city) and a postcode (US, 4-digit, 6-digit, UK, Canadian)
_TAIL = re.compile(r"^(?:(?P<region>[^\W\d_][^\W\d_ .'’-]*(?:[ .'’-]+[^\W\d_]+)*)\s+)?(?P<zip>\d{5}(?:-\d{4})?|\d{4}|\d{6}|\d{2}-\d{3}|"
                   r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]\d[A-Z]\s?\d[A-Z]\d)$")


#: a flat's, a suite's or a floor's line of an address: "Unit 3", "Apt 4B", "Suite 1200", "#12"
_UNIT = re.compile(r"^(?:(?:Unit|Apt|Apartment|Flat|Suite|Ste|Floor|Fl|Room|Rm|Level|Lot|Box|PO Box|Building|Bldg)"
                   r"\.?\s*#?|#)\s?[\dA-Za-z][\w-]{0,7}$", re.I)


def address_parts(value: str) -> list[tuple[int, int, str]]:
    """The parts of a composite street address, as (start, end, kind) with kind street, city, region or
    postcode; [] when the value is not one (no comma, or no street line with a number first)."""
    segs = [(m.start() + len(m.group(0)) - len(m.group(0).lstrip()), m.end() - len(m.group(0)) + len(m.group(0).rstrip()))
            for m in _SEG.finditer(value) if m.group(0).strip()]
    if len(segs) < 2 or not _STREET.match(value[segs[0][0]:segs[0][1]]):
        return []
    # "Flat 2, 9 Linden Grove, …": a flat's line first keeps its word (then a street line must follow)
    out = [(segs[0][0], segs[0][1], "unit" if _UNIT.match(value[segs[0][0]:segs[0][1]]) else "street")]
    for k, (a, b) in enumerate(segs[1:], 1):
        seg = value[a:b]
        last = k == len(segs) - 1
        m = _TAIL.match(seg) if last else None
        if m:
            if m.group("region"):
                kind = "region" if len(m.group("region")) <= 3 and m.group("region").isupper() else "city"
                out.append((a + m.start("region"), a + m.end("region"), kind))
            out.append((a + m.start("zip"), a + m.end("zip"), "postcode"))
        elif _CITY.match(seg):
            out.append((a, b, "region" if len(seg) <= 3 and seg.isupper() else "city"))
        elif _UNIT.match(seg):  # "221 Harbour Road, Unit 3, …": the flat or suite keeps its word
            out.append((a, b, "unit"))
        elif not last and _STREET.match(seg):  # "Flat 3, 12 High St, …": a second street line
            out.append((a, b, "street"))
        else:
            return []
    return out


def street_line(value: str) -> list[tuple[int, int, str]]:
    """A street address that is one street line with its house number ("417 Larkspur Lane", "Calle de Alcalá 48")
    as one street part, so its stand-in is made like a composite's street line (no flat added, the number's length
    kept); [] otherwise."""
    v = value.strip()
    if "," in v or "\n" in v or not _STREET.match(v) or not street_name(v):
        return []
    a = value.index(v)
    return [(a, a + len(v), "street")]


#: a street line's house number, first or last ("417 Larkspur Lane", "Calle de Alcalá 48", "Rue des Lilas 5bis"),
#: matched on one word at a time (a pattern searched over the line was quadratic on a long run of spaces)
_HOUSE_FIRST = re.compile(r"\d{1,6}[a-zA-Z]?")
_HOUSE_LAST = re.compile(r"\d{1,6}[a-zA-Z]{0,3}(?:/\d{1,4}[a-zA-Z]?)?")  # "14/3": a house and its flat


def street_name(line: str) -> str:
    """The street's name in a street line, without its house number: "Larkspur Lane" of "417 Larkspur Lane",
    "Rue des Lilas" of "5 Rue des Lilas" ("" when no number is there to take off)."""
    words = line.split()
    if len(words) < 2:
        return ""
    if _HOUSE_FIRST.fullmatch(words[0]):
        name = words[1:]
    elif _HOUSE_LAST.fullmatch(words[-1]):
        name = words[:-1]
    else:
        return ""
    return " ".join(name) if any(c.isalpha() for w in name for c in w) else ""


#: the words of a street's kind that come before its name ("27 Rue Oberkampf", "Calle de Alcalá 48", "Via Roma 12"):
#: a stand-in keeps the word and the order ("44 Rue Barker"); Faker's English street names would put a kind after
#: the name ("Barker Rue")
KIND_FIRST = frozenset({"rue", "avenue", "boulevard", "bd", "chemin", "place", "allée", "quai", "impasse", "route",
                        "calle", "avenida", "av", "paseo", "plaza", "camino", "carrer", "rua", "travessa", "largo",
                        "via", "viale", "piazza", "corso", "vicolo", "strada", "ulica", "ul", "aleja", "str"})


#: the particles of a surname, kept as written between a stand-in's names
PARTICLES = frozenset({"van", "der", "den", "de", "da", "di", "del", "della", "la", "le", "von", "zu", "bin", "ibn",
                        "al", "el", "dos", "das", "du", "ter", "ten", "af", "av", "y", "ap", "ferch", "mac", "nic", "ní", "ó", "bint"})


def _unit(value: str, rng: random.Random) -> str:
    """A flat's or a suite's line with another number: "Unit 3" → "Unit 7" (never "Unit 0" or "Suite 0042")."""
    m = re.search(r"[\dA-Za-z][\w-]*$", value)
    if not m or not any(c.isdigit() for c in m.group(0)):
        return value
    number = scramble(m.group(0), rng)
    if number.startswith("0"):
        number = str(rng.randint(1, 9)) + number[1:]
    return value[:m.start()] + number


class SurrogateMaker:
    def __init__(self):
        self._faker = None
        self._lock = threading.Lock()

    def faker(self):
        if self._faker is None:
            from faker import Faker

            self._faker = Faker("en_US")
        return self._faker

    def make(self, entity: str, value: str, seed: int, names: dict[str, str],
             avoid: Callable[[str], bool], placeholder_no: Callable[[], int], sex: str = "",
             years: int | None = None, surname: bool = False) -> str:
        """A stand-in for `value`; `sex` ('m', 'f'), what the words around a person's name say of the person's
        sex, when neither the given name nor a title does; `years`, how far the conversation moves every date's
        years (so the years between two of its dates stay); `surname`, a one-word name that is a surname alone
        (under a `last_name` key)."""
        with self._lock:
            if entity == "PERSON":
                return self.person(value, seed, names, avoid, sex, surname)
            if not any(c.isdigit() for c in value) and len(SPOKEN_DIGIT.findall(value)) >= 7:
                return spoken_digits(value, random.Random(seed))  # "oh eight seven …": dictated, so the stand-in
            for attempt in range(24):
                rng = random.Random(seed * 31 + attempt)
                self.faker().seed_instance(seed * 31 + attempt)
                cand = self._one(entity, value, rng, names, years)
                if cand is None:
                    return f"[{entity}_{placeholder_no()}]"
                if cand.strip() and cand != value and not avoid(cand):
                    return cand
            return f"[{entity}_{placeholder_no()}]"

    def address_part(self, kind: str, value: str, seed: int, avoid: Callable[[str], bool]) -> str:
        """A stand-in for one part of a composite address, in its shape: a street line keeps its house
        number's length, a postcode its layout, a two-letter state stays a state code."""
        with self._lock:
            f = self.faker()
            cand = value
            for attempt in range(24):
                rng = random.Random(seed * 37 + attempt)
                f.seed_instance(seed * 37 + attempt)
                if kind == "street":
                    num = re.match(r"\d+", value)
                    n = len(num.group(0)) if num else 0
                    kind_first = street_name(value).split()[:1]
                    street = f"{kind_first[0]} {f.last_name()}" if kind_first and \
                        kind_first[0].casefold().rstrip(".") in KIND_FIRST else f.street_name()
                    house = rng.randint(10 ** (n - 1), 10 ** n - 1) if n else 0
                    if num and house == int(num.group(0)):  # the real house number never stays
                        house = house + 1 if house + 1 < 10 ** n else 10 ** (n - 1)
                    cand = f"{house} {street}" if n else f"{street} {rng.randint(10, 999)}"
                elif kind == "postcode":
                    cand = postcode(value, rng)
                elif kind == "unit":  # "Unit 3" → "Unit 7": the word stays, the number is another
                    cand = _unit(value, rng)
                elif kind == "region" and len(value) == 2:
                    cand = f.state_abbr()
                else:
                    cand = f.city()
                if cand != value and not avoid(cand):
                    return cand
            return cand

    # ------------------------------------------------------------------ names

    def person(self, value: str, seed: int, names: dict[str, str], avoid: Callable[[str], bool],
               sex: str = "", surname: bool = False) -> str:
        parts = list(_NAME_PART.finditer(value))
        real = [m for m in parts if m.group(0).lower().rstrip(".") not in _TITLES | _SUFFIXES]
        titles = {m.group(0).lower().rstrip(".") for m in parts if m not in real}
        title_sex = "f" if titles & WOMEN_TITLES else "m" if titles & MEN_TITLES else sex
        out, pos = [], 0
        for m in parts:
            out.append(value[pos:m.start()])
            tok = m.group(0)
            if m not in real or (tok.islower() and tok in PARTICLES and 0 < parts.index(m) < len(parts) - 1):
                out.append(tok)  # a title, or a surname's particle between names ("Jan-Willem van der Berg")
            elif len(tok) == 1:  # an initial
                # another letter, never the initial itself ("R. K. Iyer" → "W. S. Hensley", not "W. K. …")
                out.append(random.Random(f"{seed}{tok}").choice([c for c in "ABCDEFGHJKLMNPRSTW" if c != tok.upper()]))
            else:
                # one word after a title is a surname ("Mrs Keane"), after a family's word a given name ("Uncle Fergus")
                last = m is real[-1] and (len(real) > 1 or parts.index(m) > 0 and not titles & KIN_TITLES or surname)
                sex = "" if last else (given_name_sex(tok) or given_name_sex(tok.split("-")[0]) or title_sex)
                out.append(standins.case_like(self.name_part(tok, last, seed, names, avoid, sex), tok))
            pos = m.end()
        out.append(value[pos:])
        return "".join(out)

    def name_part(self, tok: str, last: bool, seed: int, names: dict[str, str], avoid: Callable[[str], bool],
                  sex: str = "") -> str:
        key = tok.casefold()
        if key in names:
            return names[key]
        used = set(names.values())
        f = self.faker()
        cand = ""
        for attempt in range(40):
            f.seed_instance(seed * 131 + attempt)
            cand = f.last_name() if last else f.first_name_female() if sex == "f" else \
                f.first_name_male() if sex == "m" else f.first_name()
            if (cand.casefold() not in _COMMON and len(cand) >= 3 and cand not in used
                    and cand.casefold() not in names and not avoid(cand)):
                break
        names[key] = cand
        return cand

    # ------------------------------------------------------------------ everything else

    def _one(self, entity: str, value: str, rng: random.Random, names: dict[str, str],
             years: int | None = None) -> str | None:
        f = self.faker()
        if entity == "EMAIL_ADDRESS" and "@" in value:
            local = value.split("@", 1)[0]
            pieces = re.split(r"([._\-+])", local)
            if all(p in "._-+" or p.casefold() in names for p in pieces if p):
                new_local = "".join(p if p in "._-+" else standins.case_like(names[p.casefold()].lower(), p) for p in pieces)
            else:
                new_local = f.user_name()
            return standins.email(value, rng, new_local)
        fixed = standins.render(entity, value, rng, years=years)
        if fixed is not None:
            return fixed
        if entity == "LOCATION":
            from faker.providers.address import Provider as Base
            from faker.providers.address.en_US import Provider as US

            if value.strip() in US.states:
                return f.state()
            if value.strip() in Base.countries:
                return f.country()
            tail = _TAIL.match(value.strip())
            if tail and tail.group("region"):  # "Wellington 6011": a town and its postcode stay a town and a postcode
                return f"{f.city()} {postcode(tail.group('zip'), rng)}"
            if tail:  # a postcode alone ("postal_code": "10124", a CSV's "postcode" column) stays a postcode
                return postcode(value, rng)
            return f.city()
        if entity == "STREET_ADDRESS":
            return f.street_address()
        if entity == "ORGANIZATION":
            kind = _ORG_KIND.search(value)
            if kind:  # "Lincoln High School" → "Rowe High School": a school stays a school, a hospital a hospital
                return f"{f.last_name()} {kind.group(0)}"
            return f.company()
        if entity in ("USERNAME",):
            return f.user_name()
        if entity == "URL":
            return f"https://www.example.org/{f.uri_path()}"
        if entity == "LATLONG":
            return _NUM.sub(lambda m: _scale_number(m.group(0), 1 + rng.uniform(-0.01, 0.01)), value)
        if entity == "MEDICAL_CONDITION":
            return standins.case_like(rng.choice(_CONDITIONS), value)
        if entity == "MEDICATION":
            return standins.case_like(rng.choice(_MEDICATIONS), value)
        if entity == "NRP":
            return rng.choice(_NRP)
        if entity == "OCCUPATION":
            level = next((k for k, pattern in _DEGREE_LEVELS.items() if pattern.fullmatch(value.strip())), None)
            if level:  # "MSc" → "MA": a degree stays a degree of the same level, not "Company secretary"
                return rng.choice([d for d in _DEGREES[level] if d.casefold() != value.strip().casefold()])
            return standins.case_like(f.job().split(",")[0], value)
        if entity == "AGE":
            return _NUM.sub(lambda m: _near_age(int(float(m.group(0).replace(",", ""))), rng), value) \
                if _NUM.search(value) else None
        if entity == "AMOUNT":
            return _NUM.sub(lambda m: _scale_number(m.group(0), rng.uniform(0.75, 1.3)), value) \
                if _NUM.search(value) else None
        if entity in SCRAMBLE or any(c.isdigit() for c in value):
            return scramble(value, rng)
        return None

    @staticmethod
    def date(value: str, rng: random.Random) -> str:
        """A valid date in the same format (`standins.date`)."""
        return standins.date(value, rng)


#: the kind of organisation its last words name, kept by its stand-in ("Lincoln High School", "St Mary's Hospital")
_ORG_KIND = re.compile(r"\b(?:(?:High|Primary|Secondary|Middle|Elementary|Grammar|Junior|Senior|Public|Medical|Law|"
                       r"Business|Community)\s)?(?:School|Academy|College|University|Hospital|Clinic|Surgery|"
                       r"Medical Centre|Medical Center|Church|Mosque|Synagogue|Temple|Library|Bank|Credit Union|"
                       r"Kindergarten|Nursery|Care Home|Pharmacy|Prison)$")


#: degrees by level, and another of the same level for a stand-in
_DEGREES = {"bachelor": ("BA", "BSc", "BEng", "BCom"), "master": ("MA", "MSc", "MEng", "MBA", "MPhil"),
            "doctor": ("PhD", "DPhil", "EdD")}
_DEGREE_LEVELS = {"bachelor": re.compile(r"B\.?(?:A|Sc|Eng|Com)\.?|LL\.?B|bachelor['’]?s(?:\s+degree)?", re.I),
                  "master": re.compile(r"M\.?(?:A|Sc|Eng|Phil)\.?|MBA|LL\.?M|master['’]?s(?:\s+degree)?", re.I),
                  "doctor": re.compile(r"Ph\.?D\.?|D\.?Phil|EdD|doctorate", re.I)}


def _near_age(age: int, rng: random.Random) -> str:
    """Another age of the same stage of life: a child's or a teenager's within two years (never across 13 or 18:
    a 15-year-old with anorexia does not become 10), an adult's within two to five years."""
    if age < 18:
        lo, hi = (1, 12) if age < 13 else (13, 17)
        choices = [a for a in range(age - 2, age + 3) if a != age and lo <= a <= hi]
    else:
        choices = [age + d for d in (-5, -4, -3, -2, 2, 3, 4, 5) if age + d >= 18]
    return str(rng.choice(choices)) if choices else str(age)


def given_name_sex(name: str) -> str:
    """'f' or 'm' when the lists know `name` as only a woman's or only a man's given name, else ''; a name the
    usual locales do not hold is looked up in the world's ("Rui", "Chiamaka", "Oluwaseun")."""
    key = name.casefold()
    women, men = faker_names("first_names_female"), faker_names("first_names_male")
    if key not in women and key not in men:
        women, men = faker_names("first_names_female", locales=WORLD), faker_names("first_names_male", locales=WORLD)
    return "f" if key in women and key not in men else "m" if key in men and key not in women else ""


def _words(v: str) -> str:
    return " " + re.sub(r"\W+", " ", v.casefold()).strip() + " "


def overlaps_real(candidate: str, real: list[str]) -> bool:
    """A pseudonym candidate that contains a real value of the session as whole words, or sits inside one
    ("nurse" → "psychiatric nurse", an employer replaced by the user's own surname): refused, since a surrogate
    must never carry, or be carried by, what it hides. Words of fewer than 3 letters do not count."""
    cw = _words(candidate)
    if len(cw) <= 4:
        return False
    for r in real:
        rw = _words(r)
        if len(rw) > 4 and (rw in cw or cw in rw):
            return True
    return False
