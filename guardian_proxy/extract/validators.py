"""Per-type validators: does a value have the shape of the type a key (or a model) says it is?

A field name alone never makes a value personal data: `em:"52.123"` is not an e-mail, `st:"52.123"` not a place,
`db:"prod"` not a birth date, `name:"Facebook Pixel"` not a person. `valid(entity, value)` answers for the types
that have a shape (e-mail syntax, phone digits, Luhn, plausible dates, a person's name that is not a product, UI
string or integration name, a place that is not a number); the allow/deny vocabularies are data
(guardian_proxy/data/recognizers.yaml), loaded once. A hex digest (MD5/SHA-1/SHA-256) is accepted for the types
ad tech sends hashed (customer-matching keys: the hash is the identifier).
"""

from __future__ import annotations

import datetime as _dt
import re

from ..checksums import card_number
from ..recognizer_data import data

DIGEST = re.compile(r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9A-F]{64}")
#: base64 / base64url of a 16-, 20- or 32-byte digest (MD5, SHA-1, SHA-256), padded or not
_B64_DIGEST = re.compile(r"(?=[A-Za-z0-9+/_-]*[0-9])(?=[A-Za-z0-9+/_-]*[A-Z])(?=[A-Za-z0-9+/_-]*[a-z])"
                         r"(?:[A-Za-z0-9+/_-]{22}(?:==)?|[A-Za-z0-9+/_-]{27}=?|[A-Za-z0-9+/_-]{43}=?)")
_KEY_LIST_SEP = re.compile(r"[~,|]|(?<=\b[a-z]{2})\.")
HASHABLE = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER", "PERSON", "LOCATION", "DATE_OF_BIRTH", "GENDER", "USER_ID"})
_EMAIL = re.compile(r"[A-Za-z0-9._%+'-]{1,64}(?:@|%40)(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}")
_PHONE = re.compile(r"\+?[\d ().-]{7,24}")
_DECIMAL = re.compile(r"[-+]?\d+[.,]\d+(?:[eE][-+]?\d+)?|[-+]?\d+(?:\.\d+)?[eE][-+]?\d+")
_NAME_SPLIT = re.compile(r"[\s.'’,-]+")
_NOT_NAME_CHARS = re.compile(r"[\d@/\\_:=<>{}\[\]()#|*+%&$^~`\"]")
NOT_NAME_CHARS = _NOT_NAME_CHARS  # characters no person's name holds (resolver: NER names)
_POSTCODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 -]{1,9}")
_GENDERS = frozenset({"m", "f", "x", "u", "male", "female", "man", "woman", "other", "nonbinary", "non-binary",
                      "non_binary", "diverse", "d", "w"})
_MONTHS = {m: i for i, m in enumerate(("jan feb mar apr may jun jul aug sep oct nov dec").split(), 1)}
_DATE_FORMS = (
    re.compile(r"(?P<y>\d{4})[-/.]?(?P<m>\d{1,2})[-/.]?(?P<d>\d{1,2})(?:[T ][\d:.]+Z?)?"),
    re.compile(r"(?P<a>\d{1,2})[-/.](?P<b>\d{1,2})[-/.](?P<y>\d{4}|\d{2})"),
    re.compile(r"(?P<d>\d{1,2}) (?P<mon>[A-Za-z]{3,9})\.? (?P<y>\d{4})"),
    re.compile(r"(?P<mon>[A-Za-z]{3,9})\.? (?P<d>\d{1,2}),? (?P<y>\d{4})"),
)


def digest(value: str) -> bool:
    """A hashed identifier: an MD5/SHA-1/SHA-256 digest in hex or base64(url) (Google's enhanced conversions send
    `tv.1~em.<base64url SHA-256>~pn.<…>`: a match-key list, each part a digest)."""
    v = value.strip()
    if DIGEST.fullmatch(v) or _B64_DIGEST.fullmatch(v):
        return True
    parts = [p for p in _KEY_LIST_SEP.split(v) if len(p) >= 20]
    return bool(parts) and len(v) <= 2000 and any(DIGEST.fullmatch(p) or _B64_DIGEST.fullmatch(p) for p in parts)


def decimal_number(value: str) -> bool:
    """A float such as a timing or a coordinate (`52.123`, `1.5e3`): never an identifier's digits."""
    return bool(_DECIMAL.fullmatch(value.strip()))


def email(value: str) -> bool:
    return bool(_EMAIL.fullmatch(value.strip()))


def phone(value: str) -> bool:
    v = value.strip()
    if not _PHONE.fullmatch(v) or decimal_number(v):
        return False
    digits = [c for c in v if c.isdigit()]
    return 7 <= len(digits) <= 15 and len(set(digits)) >= 3


def card(value: str) -> bool:
    v = value.strip()
    d = "".join(c for c in v if c.isdigit())
    if len(v) != sum(c.isdigit() or c in " -" for c in v):
        return False
    return (12 <= len(d) <= 19 and card_number(d)) or (3 <= len(d) <= 4 and d == v)  # a number, or a CVC


def plausible_date(value: str, birth: bool = True) -> bool:
    """A calendar date (ISO, d/m/y, m/d/y, 19800131, "31 Jan 1980", "Jan 31, 1980") or, for a birth year, a year;
    a birth date lies between 1900 and today."""
    v = value.strip()
    this_year = _dt.date.today().year
    if re.fullmatch(r"\d{4}", v):
        return birth and 1900 <= int(v) <= this_year
    for rx in _DATE_FORMS:
        m = rx.fullmatch(v)
        if m is None:
            continue
        g = m.groupdict()
        y = int(g["y"])
        if y < 100:
            y += 1900 if y > this_year % 100 else 2000
        if g.get("mon"):
            mon = _MONTHS.get(g["mon"][:3].lower())
            if mon is None:
                continue
            cands = [(mon, int(g["d"]))]
        elif g.get("a"):
            a, b = int(g["a"]), int(g["b"])
            cands = [(b, a), (a, b)]
        else:
            cands = [(int(g["m"]), int(g["d"]))]
        for mon, day in cands:
            try:
                d = _dt.date(y, mon, day)
            except ValueError:
                continue
            if not birth or 1900 <= d.year and d <= _dt.date.today():
                return True
    return False


def person_name(value: str) -> bool:
    """A person's name: letters only (no digits, `@`, `_`, paths), at most six parts, none a product, integration,
    platform or role word, and not made only of common words or UI strings."""
    v = value.strip()
    if not 2 <= len(v) <= 80 or _NOT_NAME_CHARS.search(v):
        return False
    words = [w.lower() for w in _NAME_SPLIT.split(v) if w]
    if not words or len(words) > 6:
        return False
    d = data()
    if any(w in d["not_name_terms"] for w in words):
        return False
    return not all(w in d["common_words"] for w in words)


def location(value: str) -> bool:
    """A place or a postal code: not a bare number with a decimal part, not a long digit run."""
    v = value.strip()
    if decimal_number(v) or not v:
        return False
    if any(c.isalpha() for c in v):
        return not person_name_reject(v)
    digits = sum(c.isdigit() for c in v)
    return 3 <= digits <= 10 and bool(_POSTCODE.fullmatch(v))


def person_name_reject(v: str) -> bool:
    """Made only of common words / UI strings, or holding a product word: not a place name either."""
    words = [w.lower() for w in _NAME_SPLIT.split(v) if w]
    d = data()
    return bool(words) and (all(w in d["common_words"] for w in words) or any(w in d["not_name_terms"] for w in words))


def gender(value: str) -> bool:
    return value.strip().lower() in _GENDERS


_HEALTH_TOKEN = re.compile(r"[A-Za-z][a-z'’-]*\.?|[A-Z]{2,6}|\d+(?:[.,]\d+)?(?:mg|mcg|ml|g|iu|%)?|[,;:()/&+-]")


def health_text(value: str) -> bool:
    """A condition or medication in words ("type 2 diabetes", "Metformin 500mg"): not a token or a code
    (`DWLSSz5Q dMc9vy` under `rx` is a random value)."""
    toks = value.split()
    return bool(toks) and len(toks) <= 12 and all(_HEALTH_TOKEN.fullmatch(t.strip(",;.")) for t in toks) and \
        any(sum(c.isalpha() for c in t) >= 3 for t in toks)


VALIDATORS = {
    "MEDICAL_CONDITION": health_text,
    "MEDICATION": health_text,
    "EMAIL_ADDRESS": email,
    "PHONE_NUMBER": phone,
    "CREDIT_CARD": card,
    "DATE_OF_BIRTH": plausible_date,
    "PERSON": person_name,
    "LOCATION": location,
    "GENDER": gender,
}


def valid(entity: str, value: str) -> bool | None:
    """True / False for a type with a validator (a digest passes for the hashable types), None for the others."""
    fn = VALIDATORS.get(entity)
    if fn is None:
        return None
    if entity in HASHABLE and digest(value):
        return True
    return fn(value)


def vendor_vocabulary() -> dict[str, str]:
    return data()["vendor_vocabulary"]


def vendor_destination(recipient: str | None, owner: str | None) -> bool | None:
    """The destination is an ad or social pixel whose customer-matching vocabulary (`em`, `ph`, `fn` …) applies;
    None when the destination is not known (a caller that passes no context)."""
    if recipient is None and owner is None:
        return None
    d = data()
    return recipient in d["vendor_classes"] or (owner or "").lower() in d["vendor_owners"]
