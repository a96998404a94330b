"""Where the personal values are in a chat request's texts, and what each one becomes.

Hits come from three sources: the detector's spans (stage 1), the registry (every value of this
conversation that is being replaced, found again wherever it appears even when the detector misses a
repeat, e.g. "John" after "John Doe"), and a backstop for the hard rule (SSN-shaped numbers, Luhn-valid
card numbers, numbers after "account"/"routing", but not a bank's own ABA routing number after "routing"). Overlaps
keep the hard-rule hit, then the longest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .. import urlencoded
from ..checksums import card_number
from .namecues import rare_in_lower
from .registry import SessionState, normalise
from .surrogates import _COMMON, _NAME_PART

#: hard rule (CAMP): always replaced by BLOCKED, whatever the score
HARD_BLOCK = frozenset({"US_SSN", "CREDIT_CARD", "US_BANK_NUMBER", "IBAN_CODE", "ACCOUNT_NUMBER"})
BLOCKED = "[BLOCKED]"
#: labels that are not a personal value (a passage, a count or measure): neither counted nor pseudonymised
NOT_VALUES = frozenset({"NARRATIVE", "QUANTITY"})

_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_ACCOUNT = re.compile(r"\b(?:account|acct|acc|a/c|routing|iban)\b[^\d\n]{0,24}?(\d[\d -]{4,24}\d)", re.I)


@dataclass
class Hit:
    slot: int
    start: int
    end: int
    entity: str
    text: str
    part: bool = False  # a name part found through the registry ("Doe" of "John Doe")
    form: bool = False  # inside a URL-encoded value: `text` is decoded, the stand-in goes back encoded


def backstop(slot: int, text: str) -> list[Hit]:
    out = [Hit(slot, m.start(), m.end(), "US_SSN", m.group(0)) for m in _SSN.finditer(text)]
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if card_number(digits) and digits[0] != "0":  # no issuer's number begins with 0 ("0000-0001-8826-4410": an ORCID)
            out.append(Hit(slot, m.start(), m.end(), "CREDIT_CARD", m.group(0)))
    for m in _ACCOUNT.finditer(text):
        digits = re.sub(r"\D", "", m.group(1))
        if len(digits) >= 6 and not (m.group(0)[:7].casefold() == "routing" and aba_routing(digits)):
            out.append(Hit(slot, m.start(1), m.end(1), "US_BANK_NUMBER", m.group(1)))
    return out


def aba_routing(digits: str) -> bool:
    """A US bank's ABA routing number (nine digits, its checksum right): "Chase's 021000021" names a bank, no one's
    account."""
    if len(digits) != 9 or not digits.isdigit():
        return False
    d = [int(c) for c in digits]
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + d[2] + d[5] + d[8]) % 10 == 0


def trim_possessive(h: Hit) -> Hit:
    m = re.search(r"['’]s$", h.text)
    if m and h.end - h.start > 2:
        h.end -= 2
        h.text = h.text[:-2]
    return h


class KnownValues:
    """A regex over the originals of the values being replaced, plus their name parts (as written, in capitals,
    and in lower case when the part is no common word)."""

    def __init__(self, state: SessionState, active: set[str]):
        self.by_norm: dict[str, str] = {}
        alts: list[tuple[str, bool]] = []
        for norm in active:
            e = state.entities[norm]
            if e.blocked or not e.original:
                continue
            self.by_norm[norm] = e.entity
            alts += _variants(e.original)
            if e.entity == "PERSON":
                for m in _NAME_PART.finditer(e.original):
                    tok = m.group(0)
                    if len(tok) >= 3 and tok.casefold() not in _COMMON and tok.casefold() in state.names:
                        alts += [(tok, False), (tok.upper(), False)]
                        if rare_in_lower(tok):  # "cheers eilidh" after "Eilidh Fraser"; not "mark" after "Mark"
                            alts.append((tok.lower(), False))
        alts = sorted(set(alts), key=lambda a: -len(a[0]))
        body = "|".join(f"(?i:{re.escape(a)})" if ci else re.escape(a) for a, ci in alts)
        self.rx = re.compile(rf"(?<!\w)(?:{body})(?:['’]s)?(?!\w)") if alts else None

    def find(self, slot: int, text: str) -> list[Hit]:
        if self.rx is None:
            return []
        out = []
        for m in self.rx.finditer(text):
            h = trim_possessive(Hit(slot, m.start(), m.end(), "", m.group(0)))
            ent = self.by_norm.get(normalise(h.text))
            if ent is None:
                h.entity, h.part = "PERSON", True
            else:
                h.entity = ent
            out.append(h)
        return out


def _variants(original: str) -> list[tuple[str, bool]]:
    """How a known value is looked for again: in any case when it holds a digit or "@" (an id, an e-mail),
    else as written, upper-cased and (when written in lower case) capitalised, so that a value like
    "reading" or "FRIEND" does not swallow every ordinary use of the word."""
    if any(c.isdigit() or c == "@" for c in original):
        return [(original, True)]
    out = {original, original.upper()}
    if original.islower():
        out.add(original[:1].upper() + original[1:])
    return [(v, False) for v in out]


def located(hits: list[Hit], offsets: tuple[int, ...], sent: str) -> list[Hit]:
    """Hits found in a text's decoded view (`urlencoded.view`) located in the text as sent; one inside a
    URL-encoded value keeps the value as written before its encoding ("Nadia Sharif" of "Nadia+Sharif"), so that
    it is one value with its plain repeats, and is marked to be written back encoded."""
    for h in hits:
        h.start, h.end = offsets[h.start], offsets[h.end]
        if urlencoded.inside(sent, h.start, h.end):
            h.form = True
        else:
            h.text = sent[h.start:h.end]
    return hits


def resolve(hits: list[Hit]) -> list[Hit]:
    """Non-overlapping hits of one slot: hard-rule hits first, then the longest, then the earliest."""
    chosen: list[Hit] = []
    for h in sorted(hits, key=lambda h: (h.entity not in HARD_BLOCK, -(h.end - h.start), h.start)):
        if all(h.end <= c.start or h.start >= c.end for c in chosen):
            chosen.append(h)
    return sorted(chosen, key=lambda h: h.start)


def apply(text: str, hits: list[Hit], render, json_text: bool) -> str:
    out, pos = [], 0
    for h in hits:
        new = render(h)
        if new is None:
            continue
        if h.form:
            new = urlencoded.encode(new)
        if json_text:
            new = json.dumps(new, ensure_ascii=False)[1:-1]
        out += [text[pos:h.start], new]
        pos = h.end
    out.append(text[pos:])
    return "".join(out)


def like_case(new: str, seen: str, original: str) -> str:
    """The surrogate in the case the text used for the original (JOHN DOE → ALEX SMITH)."""
    if seen == original:
        return new
    letters = [c for c in seen if c.isalpha()]
    if letters and seen.isupper():
        return new.upper()
    if letters and seen.islower():
        return new.lower()
    return new
