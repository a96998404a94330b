"""Stand-ins: replacement values that keep a value's format and that no real person or account can hold.

The one source of format-bound stand-ins for both surrogate makers (anonymize/surrogates.py for one request,
session/surrogates.py for a conversation's vault). Every function takes the original value and a seeded
`random.Random` (the caller's key and value decide the seed, so a value maps to the same stand-in where the
caller wants consistency) and returns a value of the same format:

| type | stand-in | why no one holds it |
|---|---|---|
| e-mail | `<plausible local part>@example.com` (.net/.org after the original's TLD) | RFC 2606/6761 reserve example.* |
| phone, US/CA (+1 or 10 digits) | `(NXX) 555-01xx`, separators kept | 555-0100–0199 is set aside for fiction |
| phone, UK (+44 / 0…) | `07700 900xxx`, `020 7946 0xxx`, `01632 960xxx` | Ofcom's drama ranges |
| phone, other country | the country code kept, a subscriber number of the same length that libphonenumber's metadata rejects | no operator range holds it |
| card | a test BIN of the same brand (Visa 411111/424242, Amex 378282/371449, Mastercard 555555/222300, …), same length and grouping, Luhn-valid | test BINs are never issued to cardholders |
| SSN / ITIN | `9xx-0g-xxxx`: area 9xx with group 01–49 | area 9xx is never an SSN, and ITINs use groups 50–65/70–88/90–92/94–99 only |
| IBAN | the country and length kept, bank code of zeros (letters `ZZZZ`), valid mod-97 check digits | no bank holds a zero bank code |
| IP | 192.0.2.x / 198.51.100.x / 203.0.113.x, 2001:db8::/32 | RFC 5737 / RFC 3849 documentation ranges |
| UUID | random hex, same version and variant nibbles, case, dashes | random 122 bits: no one's id |
| other ID | same length, alphabet (hex stays hex, digits stay digits, case kept), separators and prefix (`sk-`, `pk_live_`, `GA1.2.`, `fb.1.`); a Unix time inside keeps its first 3 digits | random |
| number | same sign, digit count, decimals and exponent; a JSON number stays a JSON number | random |
| date | a valid date in the same format (month names, weekday, zero padding, time) | random |
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import ipaddress
import os
import random
import re
import string

from .checksums import nhs_check_digit, nhs_number

_KEY = os.urandom(16)  # the process's key for stand-ins drawn without a caller's key (writers' fallbacks)

RESERVED_EMAIL_DOMAINS = ("example.com", "example.net", "example.org")
DOC_NETS = tuple(ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",
                                                     "2001:db8::/32"))


def rng_for(*parts: str, key: bytes | None = None) -> random.Random:
    """A Random seeded by a keyed hash of `parts` (the process's key unless one is given)."""
    h = hmac.new(key or _KEY, "\x1f".join(parts).encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def _reshape(template: str, digits: str) -> str:
    """`digits` written into the digit positions of `template` (separators and everything else kept)."""
    it = iter(digits)
    return "".join(next(it, "0") if c.isdigit() else c for c in template)


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(max(0, n)))


# --------------------------------------------------------------------------- e-mail


def email(value: str, rng: random.Random, local: str | None = None) -> str:
    """An address on a reserved domain. `local`: the local part to use (a plausible one: the caller's faker
    user name, or a name the conversation already maps); else one is made of letters and digits."""
    _, _, domain = value.rpartition("@")
    tld = domain.rsplit(".", 1)[-1].lower()
    dom = "example.net" if tld == "net" else "example.org" if tld == "org" else "example.com"
    if domain.isupper():
        dom = dom.upper()
    if not local:
        local = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 9))) + _digits(rng, 2)
    return f"{local}@{dom}"


def is_reserved_email(value: str) -> bool:
    domain = value.rpartition("@")[2].lower().rstrip(".")
    return any(domain == d or domain.endswith("." + d) for d in RESERVED_EMAIL_DOMAINS)


# --------------------------------------------------------------------------- phone


def _nanp(rng: random.Random) -> str:
    """Ten digits: an area code NXX (not N11) and the fiction line 555-01xx."""
    while True:
        area = f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
        if area[1:] != "11":
            return area + "55501" + _digits(rng, 2)


def _uk(nsn: str, rng: random.Random) -> str | None:
    """A UK national significant number (10 digits, no trunk 0) in Ofcom's drama ranges."""
    if len(nsn) != 10:
        return None
    if nsn.startswith("7"):
        return "7700900" + _digits(rng, 3)
    if nsn.startswith("20"):
        return "2079460" + _digits(rng, 3)
    return "1632960" + _digits(rng, 3)


def _invalid(cc: str, n: int, rng: random.Random, lead: str = "") -> str:
    """`n` subscriber digits after country code `cc` that libphonenumber does not accept as a number (no
    operator holds it); starts with the trunk digit 0 where that is enough."""
    import phonenumbers

    cand = ""
    for attempt in range(40):
        first = "0" if attempt < 10 else str(rng.randint(0, 9))
        cand = lead + first + _digits(rng, n - 1 - len(lead))
        cand = cand[:n]
        try:
            num = phonenumbers.parse("+" + cc + cand, None)
        except phonenumbers.NumberParseException:
            return cand
        if not phonenumbers.is_valid_number(num):
            return cand
    return cand


def _country_code(digits: str) -> str | None:
    import phonenumbers

    for k in (1, 2, 3):
        if phonenumbers.region_code_for_country_code(int(digits[:k])) != "ZZ" and len(digits) > k:
            return digits[:k]
    return None


def _international(value: str, digits: str) -> bool:
    """A number written with its country code: "+84 …", or "0084 …" (the international prefix and more than ten
    digits)."""
    s = value.lstrip()
    return s.startswith("+") or s.startswith("00") and len(digits) > 10


def phone(value: str, rng: random.Random) -> str:
    """A phone number no one holds, in the original's layout (separators, `+`, `00` prefix, digit count)."""
    digits = "".join(c for c in value if c.isdigit())
    n = len(digits)
    if n < 3:
        return _reshape(value, _digits(rng, n))
    intl = _international(value, digits)
    head = ""
    if intl and value.lstrip().startswith("00"):
        head, digits = "00", digits[2:]
    if intl:
        cc = _country_code(digits)
        if cc is None:
            return _reshape(value, head + _digits(rng, len(digits)))
        nsn = digits[len(cc):]
        if cc == "1" and len(nsn) == 10:
            new = _nanp(rng)
        elif cc == "44":
            new = _uk(nsn.lstrip("0") if len(nsn) == 11 else nsn, rng)
            new = ("0" + new if len(nsn) == 11 else new) if new else _invalid(cc, len(nsn), rng)
        elif nsn.startswith("0"):  # a plan whose numbers keep their 0 ("+39 06 …"): the digits after it are drawn as
            new = _invalid(cc, len(nsn), rng, lead="0")  # the same number written "06 …" draws them (`phone_key`)
        else:
            new = _invalid(cc, len(nsn), rng)
        return _reshape(value, head + cc + new)
    if n == 10 and digits[0] in "23456789":
        return _reshape(value, _nanp(rng))
    if n == 11 and digits[0] == "1":
        return _reshape(value, "1" + _nanp(rng))
    if n == 11 and digits[0] == "0":
        uk = _uk(digits[1:], rng)
        return _reshape(value, "0" + uk)
    if digits[0] == "0" and n > 3:
        # a national number of an unknown country: its trunk 0, then the subscriber digits drawn as the same number
        # written with its country code draws them ("+84 912 407 385" → "+84 0…", "0912407385" → "00…": one
        # number, one stand-in, `phone_key`); zeros lead no national plan to a subscriber
        return _reshape(value, "0" + _invalid("44", n - 1, rng))
    lead = "00" if n > 2 else ""
    return _reshape(value, _invalid("44", n, rng, lead) if lead else _digits(rng, n))


def phone_key(value: str) -> str:
    """What makes two ways of writing one phone number one number: its national significant number ("+84 912 407
    385", "+84912407385" and "0912407385" all give "912407385"; "+1 415 555 0100" and "(415) 555-0100" give
    "4155550100"). A conversation draws one stand-in per key, so the number stays one number in every format."""
    digits = "".join(c for c in value if c.isdigit())
    if _international(value, digits) and len(digits) >= 7:
        if value.lstrip().startswith("00"):
            digits = digits[2:]
        cc = _country_code(digits)
        if cc is not None:
            nsn = digits[len(cc):]
            return nsn[1:] if nsn.startswith("0") else nsn  # "+44 (0)20 …": the trunk 0 written in brackets
        return digits
    if len(digits) == 11 and digits[0] == "1":
        return digits[1:]
    return digits[1:] if digits[:1] == "0" else digits


# --------------------------------------------------------------------------- cards


_TEST_BINS = {
    "amex": ("378282", "371449"),
    "visa": ("411111", "424242"),
    "mastercard": ("555555", "222300", "510510"),
    "discover": ("601111", "601100"),
    "diners": ("305693", "362272"),
    "jcb": ("356600", "353011"),
    "unionpay": ("620000",),
}


def card_brand(digits: str) -> str:
    d2, d3, d4 = (int(digits[:k] or 0) for k in (2, 3, 4))
    if d2 in (34, 37):
        return "amex"
    if digits.startswith("4"):
        return "visa"
    if 51 <= d2 <= 55 or 2221 <= d4 <= 2720:
        return "mastercard"
    if digits.startswith("6011") or 644 <= d3 <= 649 or d2 == 65:
        return "discover"
    if d2 in (36, 38) or 300 <= d3 <= 305:
        return "diners"
    if 3528 <= d4 <= 3589:
        return "jcb"
    if d2 == 62:
        return "unionpay"
    return "visa"


def luhn_digit(body: str) -> str:
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def luhn_ok(digits: str) -> bool:
    return len(digits) > 1 and luhn_digit(digits[:-1]) == digits[-1]


def card(value: str, rng: random.Random) -> str:
    """A Luhn-valid number on a test BIN of the same brand, the same length and grouping."""
    digits = "".join(c for c in value if c.isdigit())
    n = len(digits)
    prefix = rng.choice(_TEST_BINS[card_brand(digits)])
    prefix = prefix[: max(1, min(len(prefix), n - 4))]
    body = prefix + _digits(rng, n - len(prefix) - 1)
    return _reshape(value, body + luhn_digit(body))


# --------------------------------------------------------------------------- SSN, IBAN


def ssn(value: str, rng: random.Random) -> str:
    """Area 9xx, group 01–49: neither an SSN (never issued in 9xx) nor an ITIN (other groups)."""
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 9:
        return shaped(value, rng)
    new = "9" + _digits(rng, 2) + f"{rng.randint(1, 49):02d}" + f"{rng.randint(1, 9999):04d}"
    return _reshape(value, new)


def nhs(value: str, rng: random.Random) -> str:
    """An NHS number in the 999 range, which the NHS keeps for test patients and never issues, with a valid
    modulus-11 check digit, in the value's layout ("943 476 5919" → "999 123 4564")."""
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 10:
        return shaped(value, rng)
    while True:
        body = "999" + _digits(rng, 6)
        check = nhs_check_digit(body)
        if check is not None:  # some bodies have no number
            return _reshape(value, body + str(check))


#: length of the bank code at the start of the BBAN (IBAN registry); otherwise its leading letters, or 4
_BANK_LEN = {"DE": 8, "FR": 5, "ES": 4, "IT": 6, "BE": 3, "CH": 5, "AT": 5, "PL": 8, "PT": 4, "SE": 3, "DK": 4,
             "NO": 4, "FI": 3, "LU": 3, "CZ": 4, "SK": 4, "HU": 3, "RO": 4, "GR": 3, "HR": 7, "SI": 5, "LI": 5}
_IBAN_CHARS = re.compile(r"[A-Za-z0-9]")


def _mod97(s: str) -> int:
    return int("".join(str(int(c, 36)) for c in s)) % 97


def iban_ok(value: str) -> bool:
    s = re.sub(r"\s", "", value).upper()
    return len(s) > 4 and s[:2].isalpha() and s[2:4].isdigit() and _mod97(s[4:] + s[:4]) == 1


def iban(value: str, rng: random.Random) -> str:
    """The country and length kept, a bank code of zeros (letters: Z), the account random, check digits valid."""
    compact = "".join(_IBAN_CHARS.findall(value)).upper()
    if len(compact) < 8 or not compact[:2].isalpha():
        return shaped(value, rng)
    cc, bban = compact[:2], compact[4:]
    m = re.match(r"[A-Z]+", bban)
    bank = _BANK_LEN.get(cc) or (m.end() if m else 4)
    new = []
    for i, c in enumerate(bban):
        if c.isdigit():
            new.append("0" if i < bank else rng.choice(string.digits))
        else:
            new.append("Z" if i < bank else rng.choice(string.ascii_uppercase))
    nb = "".join(new)
    check = 98 - _mod97(nb + cc + "00")
    out = iter(cc + f"{check:02d}" + nb)
    res = []
    for c in value:
        if _IBAN_CHARS.match(c):
            ch = next(out, "0")
            res.append(ch.lower() if c.islower() else ch)
        else:
            res.append(c)
    return "".join(res)


# --------------------------------------------------------------------------- IP


def ip(value: str, rng: random.Random) -> str:
    """An address in the documentation ranges, same family (IPv6: the original's group count where it can)."""
    if ":" not in value:
        return f"{rng.choice(['192.0.2', '198.51.100', '203.0.113'])}.{rng.randint(1, 254)}"
    groups = value.split(":")
    upper = any(c.isupper() for c in value)
    named = [i for i, g in enumerate(groups) if g]
    out = None
    if len(named) >= 3 and named[0] == 0 and named[1] == 1 and "." not in value:
        new = list(groups)
        new[0], new[1] = "2001", "db8"
        for i in named[2:]:
            new[i] = f"{rng.randint(0, 16 ** len(groups[i]) - 1):0{len(groups[i])}x}"[: len(groups[i])]
        out = ":".join(new)
        try:
            if ipaddress.ip_address(out) not in DOC_NETS[3]:
                out = None
        except ValueError:
            out = None
    out = out or f"2001:db8::{rng.randint(1, 0xFFFF):x}"
    return out.upper() if upper else out


def is_documentation_ip(value: str) -> bool:
    try:
        a = ipaddress.ip_address(value)
    except ValueError:
        return False
    return any(a.version == n.version and a in n for n in DOC_NETS)


# --------------------------------------------------------------------------- IDs, UUIDs, numbers


UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PREFIX = re.compile(r"^(?:[A-Za-z]{1,5}[-_](?:(?:live|test|proj|ant|api\d{0,2})[-_])?|(?:GA\d|GS\d|fb)\.\d+\.)")
_EPOCH = re.compile(r"1[5-9]\d{8}(?:\d{3})?")  # a Unix time in seconds or milliseconds (2017–2033)
_RUN = re.compile(r"[A-Za-z0-9]+")
_HEX_LOWER = "0123456789abcdef"
_HEX_UPPER = "0123456789ABCDEF"


def uuid(value: str, rng: random.Random) -> str:
    """A valid UUID: random hex, the version (13th) and variant (17th) nibbles and the case kept."""
    upper = any(c in "ABCDEF" for c in value) and not any(c in "abcdef" for c in value)
    hexes = _HEX_UPPER if upper else _HEX_LOWER
    out = []
    for i, c in enumerate(value):
        if c == "-" or i in (14, 19):
            out.append(c)
        else:
            out.append(rng.choice(hexes))
    if value[19:20] and value[19] in "89abAB":  # RFC 4122 variant 10xx: stays in 8–b
        out[19] = rng.choice("89ab" if not upper else "89AB")
    return "".join(out)


def _hexlike(run: str) -> str | None:
    """The hex alphabet of an alphanumeric run, or None: lower-case hex with a digit and a letter or 8+ characters
    of a–f; upper-case hex of 12+ characters with a letter, a shorter one whose letters sit between its digits
    ("3FA85F64"), or 8+ of A–F. Not an upper-case id whose one letter or two happen to be hex ("A09417723",
    "19283746B", "0AE" of a postcode): its digits stay digits, its letters letters."""
    if all(c in _HEX_LOWER for c in run):  # lower case: a hash's, a token's, an id's (git, UUID parts)
        has_letter = any(not c.isdigit() for c in run)
        return _HEX_LOWER if has_letter and (any(c.isdigit() for c in run) or len(run) >= 8) else None
    if all(c in _HEX_UPPER for c in run):
        letters = sum(not c.isdigit() for c in run)
        if letters and (len(run) >= 12 or letters == len(run) and len(run) >= 8 or
                        letters >= 2 and _HEX_INSIDE.search(run)):
            return _HEX_UPPER
    return None


_HEX_INSIDE = re.compile(r"\d[a-fA-F]+\d")


def _shape_run(run: str, rng: random.Random) -> str:
    if _EPOCH.fullmatch(run):  # a time stamp inside an id (`GA1.2.<random>.<first visit>`) stays a plausible time
        return run[:3] + _digits(rng, len(run) - 3)
    alpha = _hexlike(run)
    if alpha is not None:
        return "".join(rng.choice(alpha) for _ in run)
    out = []
    for c in run:
        if c.isdigit():
            out.append(rng.choice(string.digits))
        elif c.isupper():
            out.append(rng.choice(string.ascii_uppercase))
        else:
            out.append(rng.choice(string.ascii_lowercase))
    return "".join(out)


def shaped(value: str, rng: random.Random, keep_prefix: bool | int = True) -> str:
    """Same length and alphabet per run (hex stays hex, digits stay digits, case kept), separators kept, a known
    prefix (`sk-`, `pk_live_`) kept (`keep_prefix`: True for that, or a number of leading characters to keep);
    every UUID inside stays a valid UUID. Non-ASCII letters are kept as they are."""
    if isinstance(keep_prefix, bool):
        m = _PREFIX.match(value) if keep_prefix else None
        n = m.end() if m else 0
    else:
        n = keep_prefix
    head, rest = value[:n], value[n:]
    out, pos = [], 0
    for m in UUID_RE.finditer(rest):
        out.append(_shape_plain(rest[pos:m.start()], rng))
        out.append(uuid(m.group(0), rng))
        pos = m.end()
    out.append(_shape_plain(rest[pos:], rng))
    return head + "".join(out)


def _shape_plain(s: str, rng: random.Random) -> str:
    return _RUN.sub(lambda m: _shape_run(m.group(0), rng), s) if s else s


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_NUMBER = re.compile(r"^([+-]?)(\d+)((?:[.,]\d+)?)((?:[eE][+-]?\d+)?)$")


def is_json_number(text: str) -> bool:
    return _JSON_NUMBER.fullmatch(text) is not None


def number(value: str, rng: random.Random) -> str | None:
    """A number of the same shape (sign, digit count, decimals, exponent; no new leading zero), different
    from `value` where it can be; None when `value` is not a plain number."""
    m = _NUMBER.match(value.strip())
    if not m:
        return None
    sign, whole, frac, exp = m.groups()
    out = value
    for _ in range(8):
        if whole == "0" or len(whole) == 1:
            w = str(rng.randint(0 if whole == "0" else 1, 9)) if whole != "0" else "0"
        else:
            first = str(rng.randint(1, 9)) if whole[0] != "0" else "0"
            w = first + _digits(rng, len(whole) - 1)
        f = frac[:1] + _digits(rng, len(frac) - 1) if frac else ""
        out = sign + w + f + exp
        if out != value.strip():
            break
    return out


# --------------------------------------------------------------------------- dates


_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_MONTH_WORD = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?", re.I)
_DAY_WORD = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?:day|sday|nesday|rsday|urday|s|r|rs)?\b\.?", re.I)
_TIME = re.compile(r"(?<!\d)(\d{1,2}):(\d{2})(?::(\d{2}))?(?!\d)")
#: a zone's offset after a time ("12:00:00+09:00", "09:30-0500")
_OFFSET = re.compile(r"(?<=:\d\d)[+-]\d{2}:?\d{2}(?!\d)")
_ISO = re.compile(r"(?<!\d)(\d{4})([-/.]?)(\d{2})\2(\d{2})(?!\d)")
_DMY = re.compile(r"(?<!\d)(\d{1,2})([-/.])(\d{1,2})\2(\d{2}|\d{4})(?!\d)")


def case_like(new: str, old: str) -> str:
    """`new` in the case of `old` (all capitals, all lower case, or as it is)."""
    if old.isupper() and len(old) > 1:
        return new.upper()
    if old.islower():
        return new.lower()
    return new


def _w(n: int, width: int) -> str:
    return str(n).zfill(width)


def _year(tok: str, rng: random.Random, years: int | None = None) -> str:
    shift = years or rng.choice([-3, -2, -1, 1, 2, 3])
    if len(tok) == 4:
        return str(min(2099, max(1000, int(tok) + shift)))
    return _w((int(tok) + shift) % 100, len(tok))


def date(value: str, rng: random.Random, years: int | None = None) -> str:
    """A valid date in the same format: ISO `YYYY-MM-DD` and `D/M/Y` or `M/D/Y` (a field over 12 is the day;
    when both could be the month, both stay ≤ 12), month and weekday names, times (hour < 24), years moved by
    1–3 (by `years` when given: one conversation moves every year alike, so "born in 2015 … how old in 2030?"
    keeps its answer); days are 1–28, so every month holds them ("May", a name and an abbreviation at once,
    stays)."""
    def month(m):
        word = m.group(0)
        if word.lower() == "may":  # the full name and the abbreviation at once: only May is both
            return word
        full = next(x for x in _MONTHS if x.lower().startswith(word.lower().rstrip(".")[:3]))
        new = rng.choice([x for x in _MONTHS if x != full])
        return case_like(new if len(word.rstrip(".")) > 3 else new[:3] + ("." if word.endswith(".") else ""), word)

    def day(m):
        return _weekday_like(rng.choice([d for d in _DAYS if not d.lower().startswith(m.group(1).lower()[:3])]),
                             m.group(0))

    named = _MONTH_WORD.search(value) is not None
    out = _MONTH_WORD.sub(month, value)
    out = _DAY_WORD.sub(day, out)
    spans: list[tuple[int, int, str]] = []

    def taken(a: int, b: int) -> bool:
        return any(a < y and x < b for x, y, _ in spans)

    for m in _OFFSET.finditer(out):  # "T00:00:00+09:00": the zone stays a valid one (not "+03:29")
        spans.append((m.start(), m.end(), m.group(0)))
    for m in _TIME.finditer(out):
        if taken(m.start(), m.end()):
            continue
        h, se = m.group(1), m.group(3)
        new = _w(rng.randint(0, 23), len(h)) + ":" + _w(rng.randint(0, 59), 2)
        if se is not None:
            new += ":" + _w(rng.randint(0, 59), 2)
        spans.append((m.start(), m.end(), new))
    for m in _ISO.finditer(out):
        if taken(m.start(), m.end()):
            continue
        y, sep, mo, d = m.groups()
        spans.append((m.start(), m.end(), _year(y, rng, years) + sep + _w(rng.randint(1, 12), 2) + sep +
                      _w(rng.randint(1, 28), 2)))
    for m in _DMY.finditer(out):
        if taken(m.start(), m.end()):
            continue
        a, sep, b, y = m.groups()
        if int(a) > 12:  # a is the day
            na, nb = rng.randint(1, 28), rng.randint(1, 12)
        elif int(b) > 12:
            na, nb = rng.randint(1, 12), rng.randint(1, 28)
        else:
            na, nb = rng.randint(1, 12), rng.randint(1, 12)
        spans.append((m.start(), m.end(), _w(na, len(a)) + sep + _w(nb, len(b)) + sep + _year(y, rng, years)))
    for m in re.finditer(r"\d+", out):
        if taken(m.start(), m.end()):
            continue
        tok = m.group(0)
        if len(tok) == 4 and 1000 <= int(tok) <= 2999:
            new = _year(tok, rng, years)
        elif len(tok) <= 2:
            new = _w(rng.randint(1, 28 if named or int(tok) > 12 else 12), len(tok))
        else:
            new = _digits(rng, len(tok))
        spans.append((m.start(), m.end(), new))
    for a, b, new in sorted(spans, reverse=True):
        out = out[:a] + new + out[b:]
    wd = _DAY_WORD.search(out)
    when = _calendar_date(out[:wd.start()] + " " * (wd.end() - wd.start()) + out[wd.end():]) if wd else None
    if when is not None:  # "Mon, 30 Nov 2026" → "Thu, 03 Oct 2024": the new date's own weekday, not a random one
        out = out[:wd.start()] + _weekday_like(_DAYS[when.weekday()], wd.group(0)) + out[wd.end():]
    return out


def _weekday_like(new: str, old: str) -> str:
    """`new` (a weekday's full name) written as `old` is: full or abbreviated ("Mon", "Tues"), with its case."""
    return case_like(new if old.lower().endswith("day") else new[:len(old.rstrip("."))] + ("." if old.endswith(".") else ""),
                     old)


def _calendar_date(text: str) -> _dt.date | None:
    """The one calendar date `text` writes in full (a year, a month and a day: "03 Oct 2024", "October 3, 2024",
    "2024-10-03"), or None."""
    m = _ISO.search(text)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(3)), int(m.group(4))
    else:
        year, mw = re.search(r"(?<!\d)(1\d{3}|2\d{3})(?!\d)", text), _MONTH_WORD.search(text)
        if not year or not mw:
            return None
        days = [n for n in re.finditer(r"(?<![\d:])(\d{1,2})(?![\d:])", text)]
        if len(days) != 1:
            return None
        y, d = int(year.group(1)), int(days[0].group(1))
        mo = next(k for k, x in enumerate(_MONTHS, 1) if x.lower().startswith(mw.group(0).lower().rstrip(".")[:3]))
    try:
        return _dt.date(y, mo, d)
    except ValueError:
        return None


# --------------------------------------------------------------------------- recognising a stand-in


_FICTION_PHONE = re.compile(r"(?:1?[2-9]\d{2}55501\d{2}|(?:44|0)(?:7700900|2079460|1632960)\d{3})")


def is_standin(value: str) -> bool:
    """A value of a kind no one holds: an e-mail on a reserved domain, a documentation IP, a phone in a fiction
    range (555-01xx, Ofcom's drama ranges), a card on a test BIN. For the adversary and the benchmarks: guessing
    one is no leak."""
    v = value.strip()
    if "@" in v:
        return is_reserved_email(v)
    if is_documentation_ip(v):
        return True
    d = "".join(c for c in v if c.isdigit())
    if not d or re.search(r"[A-Za-z]", v):
        return False
    if _FICTION_PHONE.fullmatch(d) or d.startswith("999") and nhs_number(d):
        return True  # a fiction phone, an NHS test number
    return 12 <= len(d) <= 19 and luhn_ok(d) and any(d.startswith(b) for bins in _TEST_BINS.values() for b in bins)


# --------------------------------------------------------------------------- by type

#: the entity types whose stand-in is drawn here (the makers draw names, places and words from Faker)
FORMAT_TYPES = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "US_SSN", "US_ITIN", "IBAN_CODE",
                          "IP_ADDRESS", "DATE", "DATE_TIME", "UK_NHS"})


def render(entity: str, value: str, rng: random.Random, local: str | None = None,
           years: int | None = None) -> str | None:
    """The stand-in for `value` of type `entity` when it is one of FORMAT_TYPES or carries digits (an ID),
    else None (the caller's generator, or a placeholder); `years`: how far a date's years move (see `date`)."""
    v = value
    if entity == "EMAIL_ADDRESS" and "@" in v:
        return email(v, rng, local)
    if entity == "PHONE_NUMBER" and any(c.isdigit() for c in v):
        return phone(v, rng)
    if entity == "CREDIT_CARD" and sum(c.isdigit() for c in v) >= 12:
        return card(v, rng)
    if entity in ("US_SSN", "US_ITIN"):
        return ssn(v, rng)
    if entity == "UK_NHS":
        return nhs(v, rng)
    if entity == "IBAN_CODE":
        return iban(v, rng)
    if entity == "IP_ADDRESS":
        return ip(v.strip(), rng)
    if entity in ("DATE", "DATE_TIME", "DATE_OF_BIRTH"):  # a birth date is a date: "3 April 1987", not "1 Nadag 6376"
        return date(v, rng, years)
    if UUID_RE.fullmatch(v):
        return uuid(v, rng)
    return None


__all__ = ["DOC_NETS", "FORMAT_TYPES", "RESERVED_EMAIL_DOMAINS", "UUID_RE", "card", "card_brand", "date", "email",
           "iban", "iban_ok", "ip", "is_documentation_ip", "is_json_number", "is_reserved_email", "is_standin", "luhn_digit",
           "luhn_ok", "nhs", "number", "phone", "render", "rng_for", "shaped", "ssn", "uuid"]
