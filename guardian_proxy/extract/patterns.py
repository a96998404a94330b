"""Fast pattern recognizers for structured identifiers (used with and without NER).

Each recognizer is a small class with its data in class constants (`PATTERNS`, `CONTEXT`) and an
optional `validate` (checksums, ranges). Every pattern is linear on adversarial input: quantifiers are
bounded or anchored by look-behinds, alternatives are disjoint (tests/unit/extract/test_extract_redos.py runs each
on 100 KB inputs). Hits are (start, end, entity, score).
"""

from __future__ import annotations

import re

import phonenumbers

from ..checksums import card_number, nhs_number

Hit = tuple[int, int, str, float]
_WINDOW = 40


class Recognizer:
    ENTITY = ""
    PATTERNS: tuple[tuple[str, float], ...] = ()
    CONTEXT: tuple[str, ...] = ()  # words within 40 chars before the match that raise the score
    NEEDS_CONTEXT = False  # drop matches with no context word
    FLAGS = 0

    def __init__(self):
        self.compiled = [(re.compile(p, self.FLAGS), s) for p, s in self.PATTERNS]

    def validate(self, value: str) -> bool:
        return True

    def find(self, text: str) -> list[Hit]:
        out = []
        for rx, score in self.compiled:
            group = "v" if "v" in rx.groupindex else 0  # (?P<v>…) marks the value inside a longer match
            for m in rx.finditer(text):
                value = m.group(group)
                if not value or not self.validate(value):
                    continue
                start, end = m.span(group)
                s = score
                if self.CONTEXT:
                    before = text[max(0, start - _WINDOW): start].lower()
                    if any(w in before for w in self.CONTEXT):
                        s = min(1.0, score + 0.35)
                    elif self.NEEDS_CONTEXT:
                        continue
                out.append((start, end, self.ENTITY, round(s, 3)))
        return out


class EmailRecognizer(Recognizer):
    ENTITY = "EMAIL_ADDRESS"
    PATTERNS = (
        (r"(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![\w-])", 0.95),
        (r"(?<![\w.%+-])[A-Za-z0-9._+-]{1,64}%40(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![\w-])", 0.9),
    )
    #: file-name suffixes that look like a domain after `@` (`logo@2x.png`, `tent@3x.avif`)
    _FILE_TLDS = frozenset({"png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "bmp", "tif", "tiff", "heic",
                            "js", "mjs", "css", "map", "json", "woff", "woff2", "ttf", "otf", "mp4", "webm", "pdf"})

    #: a URL's user and password before the match: its "@" ends the password, the host follows
    #: ("postgres://app_rw:Tz8!vQm2#pLw4Ks@db.internal:5432": no address, the password's rule reads it)
    _USERINFO = re.compile(r"://[^\s/@]{0,64}:[^\s/@]{0,128}$")

    def validate(self, value: str) -> bool:
        domain = value.replace("%40", "@").rsplit("@", 1)[-1].lower()
        tld = domain.rsplit(".", 1)[-1]
        return tld not in self._FILE_TLDS and not re.match(r"\d+x\.", domain)

    def find(self, text: str) -> list[Hit]:
        return [h for h in super().find(text) if not self._USERINFO.search(text, max(0, h[0] - 200), h[0])]


_EXTENSION = re.compile(r"[ ]?(?:x|ext\.?|extn\.?)[ ]?\d{1,6}$")


class PhoneRecognizer(Recognizer):
    ENTITY = "PHONE_NUMBER"
    #: an extension after the number is part of it ("555-123-4567 ext. 89", "(555)123-8826x372")
    _EXT = r"(?:[ ]?(?:x|ext\.?|extn\.?)[ ]?\d{1,6})?"
    PATTERNS = (
        # groups of up to eight digits: "+44 (0)7392 118405", "+49 (0)30 12873456"
        (r"(?<![\w+/.-])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,8}){1,4}" + _EXT +
         r"(?![\w/]|[.-]\d)", 0.7),
        (r"(?<![\w+/.-])\+\d{7,14}(?![\w/]|[.,]\d)", 0.7),
        (r"(?<![\w+/.-])\(\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}" + _EXT + r"(?![\w/]|[.-]\d)", 0.6),
        # a North American number, with the trunk or international prefix ("1-", "001-") when written
        (r"(?<![\w+/.-])(?:(?:00)?1-)?\d{3}[.-]\d{3}[.-]\d{4}" + _EXT + r"(?![\w/]|[.-]\d)", 0.5),
        (r"(?<![\w+/.-])0\d{1,4}[ -]\d{3,4}[ -]?\d{3,4}" + _EXT + r"(?![\w/]|[.-]\d)", 0.45),  # "06 4821 7733"
        (r"(?<![\w+/.-])\d{10,11}(?![\w/]|[.,]\d)", 0.2),
    )
    CONTEXT = ("phone", "call", "tel", "mobile", "cell", "whatsapp", "sms", "text me", "fax", "contact")

    def validate(self, value: str) -> bool:
        value = _EXTENSION.sub("", value)  # the extension's digits are no part of the number's length
        digits = sum(c.isdigit() for c in value)
        if not 7 <= digits <= 15 or len(set(c for c in value if c.isdigit())) < 3:
            return False
        if value.startswith("+"):
            try:
                return phonenumbers.is_possible_number(phonenumbers.parse(value, None))
            except phonenumbers.NumberParseException:
                return False
        return True


class CreditCardRecognizer(Recognizer):
    ENTITY = "CREDIT_CARD"
    # a number after an underscore is part of a snake_case identifier or file name
    # (`homepage_track_3183030463631309.gif`), not a card (one glued to letters may be: `id4111…` in a host label)
    PATTERNS = ((r"(?<![\d_-])[2-6]\d{3}(?:[ -]?\d{4}){2}[ -]?\d{1,4}(?:[ -]?\d{1,3})?(?![\d-])", 0.9),
                (r"(?<![\d_-])3[47]\d{2}[ -]?\d{6}[ -]?\d{5}(?![\d-])", 0.9))

    def validate(self, value: str) -> bool:
        d = "".join(c for c in value if c.isdigit())
        return card_number(d)


class IbanRecognizer(Recognizer):
    ENTITY = "IBAN_CODE"
    PATTERNS = ((r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])", 0.9),)

    def validate(self, value: str) -> bool:
        s = value.replace(" ", "")
        if not 15 <= len(s) <= 34:
            return False
        r = s[4:] + s[:4]
        num = "".join(str(int(c, 36)) for c in r)
        return int(num) % 97 == 1


class UsSsnRecognizer(Recognizer):
    ENTITY = "US_SSN"
    PATTERNS = ((r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])", 0.6), (r"(?<![\d-])\d{3} \d{2} \d{4}(?![\d-])", 0.4),
                (r"(?<![\w-])\d{9}(?![\w-])", 0.1))
    CONTEXT = ("ssn", "social security", "social sec", "ss#", "ss #", "taxpayer")

    def validate(self, value: str) -> bool:
        d = "".join(c for c in value if c.isdigit())
        area, group, serial = d[:3], d[3:5], d[5:]
        return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000" and len(set(d)) > 2


class UkNinoRecognizer(Recognizer):
    ENTITY = "GOVERNMENT_ID"
    PATTERNS = ((r"(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
                 r"(?![A-Za-z0-9])", 0.5),)
    CONTEXT = ("national insurance", "nino", "ni number", "ni no")


class IpRecognizer(Recognizer):
    ENTITY = "IP_ADDRESS"
    _O = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    _H = r"[0-9A-Fa-f]{1,4}"
    # not after `product/` or `brand;` (versions: Chrome/156.0.0.0 in a user agent, "Chromium;126.0.6478.126" in
    # client hints); `//10.0.0.1` is a host
    PATTERNS = ((rf"(?<![\w.;])(?<!\w/){_O}\.{_O}\.{_O}\.{_O}(?!\w|\.\w)", 0.7),  # its sentence's full stop may follow
                (rf"(?<![\w:]){_H}(?::{_H}){{7}}(?![\w:])", 0.7),
                (rf"(?<![\w:]){_H}(?::{_H}){{1,6}}::(?:{_H}(?::{_H}){{0,5}})?(?![\w:])", 0.6))

    def validate(self, value: str) -> bool:
        if "." in value:
            first = value.split(".", 1)[0]
            # x.0.0.0 is a network (or a version: "Chrome 156.0.0.0"), never a host's address
            return value not in ("127.0.0.1", "255.255.255.255") and first != "0" and not value.endswith(".0.0.0")
        return value.count(":") >= 3


class MacRecognizer(Recognizer):
    ENTITY = "DEVICE_ID"
    PATTERNS = ((r"(?<![\w:-])[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}(?![\w:-])", 0.6),
                (r"(?<![\w:-])[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}(?![\w:-])", 0.6))


class LatLongRecognizer(Recognizer):
    ENTITY = "LATLONG"
    PATTERNS = ((r"(?<![\w.-])-?\d{1,2}\.\d{3,8}\s{0,3},\s{0,3}-?\d{1,3}\.\d{3,8}(?![\w.])", 0.7),)
    CONTEXT = ("lat", "lng", "lon", "location", "coordinates", "gps", "geo", "position")

    def validate(self, value: str) -> bool:
        a, b = (float(x) for x in value.split(","))
        return -90 <= a <= 90 and -180 <= b <= 180 and not (a == 0 and b == 0)


class StreetAddressRecognizer(Recognizer):
    ENTITY = "STREET_ADDRESS"
    _SUFFIX = (r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|"
               r"Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Close|Crescent|Gardens|Grove|Row|Mews|Walk|Hill")
    PATTERNS = ((rf"(?<![\w-])\d{{1,5}}[A-Za-z]?,? (?:[A-Z][a-z]{{1,20}}\.? ){{1,4}}(?:{_SUFFIX})\b\.?"
                 rf"(?:,? (?:Apt|Apartment|Suite|Ste|Unit|Flat|#) ?\w{{1,6}})?", 0.85),)


class PostcodeRecognizer(Recognizer):
    ENTITY = "LOCATION"
    # UK postcode; not a part of a hyphenated or underscored id (`AAA-AB12CD`)
    PATTERNS = ((r"(?<![A-Za-z0-9_-])[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}(?![A-Za-z0-9_-])", 0.6),)


class NhsRecognizer(Recognizer):
    ENTITY = "UK_NHS"
    PATTERNS = ((r"(?<![\w-])\d{3}[ -]?\d{3}[ -]?\d{4}(?![\w-])", 0.5),)
    CONTEXT = ("nhs",)
    NEEDS_CONTEXT = True

    def validate(self, value: str) -> bool:
        return nhs_number("".join(c for c in value if c.isdigit()))


class HomeDirRecognizer(Recognizer):
    ENTITY = "USERNAME"
    # not inside a URL path (`dailymail.co.uk/home/index.html` is a page, not a home directory)
    PATTERNS = ((r"(?:(?<![\w.~%-])/home/|(?<![\w.~%-])/Users/|[A-Za-z]:\\{1,2}Users\\{1,2})(?P<v>[A-Za-z0-9._-]{2,32})",
                 0.8),)
    # `index.html`: a file, not an account (an extension at the end after something; searched, linear)
    _FILE = re.compile(r"(?<=.)\.[A-Za-z0-9]{1,5}\Z")

    def validate(self, value: str) -> bool:
        from .validators import data  # a site's section named like a home directory: `pageName=/home/home`

        return value.lower() not in ("shared", "public", "default", "guest", "admin", "user", "runner", "ubuntu") \
            and not self._FILE.search(value) and value.lower() not in data()["common_words"]


class DateOfBirthRecognizer(Recognizer):
    ENTITY = "DATE_OF_BIRTH"
    PATTERNS = ((r"(?i)\b(?:date of birth|birth ?date|d\.?o\.?b\.?|born(?: on)?)\s{0,3}[:=-]?\s{0,3}"
                 r"(?P<v>\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]{2,8} \d{4}|"
                 r"[A-Z][a-z]{2,8} \d{1,2},? \d{4})", 0.9),)


RECOGNIZERS: tuple[Recognizer, ...] = (
    EmailRecognizer(), PhoneRecognizer(), CreditCardRecognizer(), IbanRecognizer(), UsSsnRecognizer(),
    UkNinoRecognizer(), IpRecognizer(), MacRecognizer(), LatLongRecognizer(), StreetAddressRecognizer(),
    PostcodeRecognizer(), DateOfBirthRecognizer(), NhsRecognizer(), HomeDirRecognizer(),
)


def find(text: str) -> list[Hit]:
    out: list[Hit] = []
    for r in RECOGNIZERS:
        out += r.find(text)
    return out
