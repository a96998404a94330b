"""Lexical verification of the adversary's guesses (GuardianAgent §verified escalation).

A guess counts only if it is a substring of the original text (case- and space-insensitive, at least
three characters) or shares a content word longer than two characters with it. Guesses built on
surrogates, placeholders or hallucinations fail the test, so they never raise the level. The original
stays here: the guesser never sees it.

A number is verified only as a whole number of the original: "1,000" is a bound of the range the anonymizer
wrote itself ("EUR 1,000-10,000" for "EUR 5,443.70") and shares no value with the original, although its digit
group "000" appears in any round sum there. Digit groups are not content words.

A guess made only of the recipient's own names (the destination's or the sending page's name: "Hotstar" in the
page title a request to hotstar.com carries) is no residue either: the recipient knows its own name, and it says
nothing of who the user is (`own_names`).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex as re

from .language import FUNCTION_WORDS

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Guess:
    value: str
    confidence: float
    cue: str = ""  # what the guess was built on (log-safe kind, never the value)


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def content_words(s: str) -> set[str]:
    """Words of three letters or more that are not function words; a group of digits is no word ("000")."""
    return {w for w in _WORD.findall(s.lower()) if len(w) > 2 and w not in FUNCTION_WORDS and not w.isdigit()}


_NUMBER = re.compile(r"\d[\d,.' ]*\d|\d")


def _whole(value: str, text: str) -> bool:
    """Is `value` in `text` as a whole number (no digit, and no digit group of the same number, around it)?"""
    return re.search(r"(?<![\d,.])" + re.escape(value) + r"(?![\d]|[,.]\d)", text) is not None


def own_names(*domains: str | None) -> frozenset[str]:
    """The names the recipient goes by: the name label of each registrable domain given (the destination's and
    the sending page's: "hotstar.com" → "hotstar", "bbc.co.uk" → "bbc"), and its parts at a hyphen."""
    out: set[str] = set()
    for d in domains:
        label = (d or "").lower().strip(".").split(".", 1)[0]
        out |= content_words(label) | content_words(label.replace("-", ""))
    return frozenset(out)


class LexicalVerifier:
    def __init__(self, original: str, own: frozenset[str] | set[str] = frozenset()):
        """`own`: the recipient's own names (`own_names`); a guess of those alone is not verified."""
        self._text = _norm(original)
        self._words = content_words(original)
        self._own = frozenset(own)

    def verified(self, guess: Guess) -> bool:
        g = _norm(guess.value)
        words = content_words(g)
        if self._own and words and words <= self._own:
            return False  # the destination's or the page's own name: it knows it, and it is not the user
        if _NUMBER.fullmatch(g):
            return _whole(g, self._text)  # a number: the same number, not a digit run inside another one
        if len(g) >= 3 and g in self._text:
            return True
        return bool(words & self._words)
