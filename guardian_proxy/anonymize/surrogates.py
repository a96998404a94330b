"""Realistic, consistent surrogates for direct identifiers (L4 and up): names from Faker, format-bound values
from `guardian_proxy.standins` (the one source both surrogate makers use).

Type- and format-preserving, and held by no one: a phone keeps its separators and country prefix and gets a
number from a fiction range (555-01xx, 07700 900xxx), a card number a Luhn-valid test-BIN number of the same
brand, length and grouping, an e-mail a reserved domain (example.com/.net/.org), an SSN a never-issued area,
an IBAN a zero bank code with valid check digits, an IP a documentation range, a UUID stays a valid UUID and
an ID keeps its length and alphabet; a person keeps their title and initials-vs-names shape (Faker's names
are real names, as is accepted practice for person names; e-mails never get a real domain). Consistent: the same value gets the same surrogate everywhere in a
request, and each part of a name is mapped on its own so "Christou" alone matches "Anna Christou".
Surrogates are drawn from a keyed hash of the value (the key is random per Transformer unless a seed is
given), and never reuse a word of the original text.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import threading
from bisect import bisect
from collections import OrderedDict
from itertools import accumulate

import regex as re

from .. import standins

_TITLE = re.compile(r"^(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Judge|Sir|Dame|Lady|Lord|Mme|Mlle|Herr|Frau)\.?\s+)+")
_INITIAL = re.compile(r"^(?:\p{Lu}\.)+$")
_WORD = re.compile(r"\w+")


class Surrogates:
    def __init__(self, original_text: str = "", seed: bytes | None = None):
        from faker import Faker

        self._fake = _shared_faker(Faker)
        self._key = seed or os.urandom(16)
        self._words = set(_WORD.findall(original_text.lower()))
        self._map: dict[tuple[str, str], str] = {}

    def _seed(self, *parts: str) -> None:
        h = hmac.new(self._key, "\x1f".join(parts).encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
        self._fake.seed_instance(int.from_bytes(h[:8], "big"))
        self._rng = random.Random(int.from_bytes(h[8:16], "big"))

    def _fresh(self, kind: str, value: str, make) -> str:
        key = (kind, value.lower())
        if key in self._map:
            return self._map[key]
        used = set(self._map.values())
        for attempt in range(8):
            self._seed(kind, value.lower(), str(attempt))
            out = make()
            words = set(_WORD.findall(out.lower()))
            if out not in used and not (words & self._words):
                break
        self._map[key] = out
        return out

    # ------------------------------------------------------------------ by type

    def person(self, value: str) -> str:
        m = _TITLE.match(value)
        title = m.group() if m else ""
        parts = value[len(title):].split()
        out = []
        for i, p in enumerate(parts):
            known = self._map.get(("last", p.strip(",;").lower())) or self._map.get(("first", p.strip(",;").lower()))
            if known and len(parts) == 1:
                out.append(known)
            elif _INITIAL.match(p):
                out.append(self._fresh("initial", p, lambda: self._fake.random_uppercase_letter() + "."))
            elif i == len(parts) - 1 and (len(parts) > 1 or title):
                out.append(self._fresh("last", p.strip(",;"), lambda: _weighted(self._fake, "last_name", "last_names")))
            else:
                out.append(self._fresh("first", p.strip(",;"),
                                       lambda: _weighted(self._fake, "first_name", "first_names")))
        return title + " ".join(out) if out else title

    def username(self, value: str) -> str:
        at = "@" if value.startswith("@") else ""
        return at + self._fresh("user", value.lstrip("@"), self._fake.user_name)

    def email(self, value: str) -> str:
        """A plausible local part on a reserved domain (never a real provider's)."""
        return self._fresh("email", value, lambda: standins.email(value, self._rng, self._fake.user_name()))

    def address(self, value: str) -> str:
        return self._fresh("address", value, self._fake.street_address)

    def card(self, value: str) -> str:
        return self._fresh("card", value, lambda: standins.card(value, self._rng))

    def shaped(self, value: str, keep_prefix: bool | int = True) -> str:
        """Same shape: hex stays hex, digits stay digits, letters stay letters (case kept), separators and a
        known prefix kept, a UUID stays a valid UUID."""
        return self._fresh("shaped", value, lambda: standins.shaped(value, self._rng, keep_prefix))

    def phone(self, value: str) -> str:
        return self._fresh("phone", value, lambda: standins.phone(value, self._rng))

    def standin(self, entity: str, value: str) -> str | None:
        """A format-bound stand-in from `standins` (SSN, IBAN, IP, date, UUID …), or None."""
        if entity not in standins.FORMAT_TYPES and not standins.UUID_RE.fullmatch(value):
            return None
        return self._fresh(entity.lower(), value, lambda: standins.render(entity, value, self._rng))

    def render(self, entity: str, value: str) -> str | None:
        """A surrogate for a direct identifier, or None when the type has no surrogate (→ placeholder)."""
        if entity == "PERSON":
            return self.person(value)
        if entity == "USERNAME":
            return self.username(value)
        if entity == "EMAIL_ADDRESS":
            return self.email(value)
        if entity == "STREET_ADDRESS":
            return self.address(value)
        if entity == "CREDIT_CARD":
            return self.card(value)
        if entity == "PHONE_NUMBER":
            return self.phone(value)
        if entity in ("IBAN_CODE", "US_SSN", "US_ITIN", "IP_ADDRESS"):
            return self.standin(entity, value)
        if entity in ("US_PASSPORT", "US_DRIVER_LICENSE", "UK_NHS", "GOVERNMENT_ID", "US_BANK_NUMBER",
                      "ACCOUNT_NUMBER", "MEDICAL_LICENSE", "DEVICE_ID", "ADVERTISING_ID", "SESSION_ID"):
            return self.shaped(value)
        return None


_LOCAL = threading.local()
#: id of a provider's weighted name table -> (the table, its names, their cumulative weights, the total)
_CUMULATIVE: dict[int, tuple[OrderedDict, tuple[str, ...], list[float], float]] = {}


def _weighted(fake, method: str, table: str) -> str:
    """`fake.<method>()` (first_name, last_name): one name of the provider's weighted table, drawn as Faker draws it
    (`random.choices(names, weights)`: one `random()` against the cumulative weights), with the cumulative weights
    summed once per process rather than on every call. The same name for the same seed, byte for byte
    (tests/unit/anonymize/test_surrogates_faker.py checks it against Faker's own draw)."""
    provider = getattr(fake, method).__self__
    elements = getattr(provider, table, None)
    if not isinstance(elements, OrderedDict) or not provider.__use_weighting__:
        return getattr(fake, method)()
    cached = _CUMULATIVE.get(id(elements))
    if cached is None or cached[0] is not elements:
        cum = list(accumulate(elements.values()))
        cached = _CUMULATIVE[id(elements)] = (elements, tuple(elements), cum, cum[-1] + 0.0)
    _, names, cum, total = cached
    return names[bisect(cum, provider.generator.random.random() * total, 0, len(names) - 1)]


def _shared_faker(factory):
    """One Faker per thread (building one takes ~50 ms); it is re-seeded for every value, so a thread may reuse
    it across requests but two threads must not share it."""
    fake = getattr(_LOCAL, "faker", None)
    if fake is None:
        fake = _LOCAL.faker = factory("en_US")
    return fake
