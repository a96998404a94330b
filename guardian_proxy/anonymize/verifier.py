"""Lexical verification of the adversary's guesses (GuardianAgent §verified escalation).

A guess counts only if it is a substring of the original text (case- and space-insensitive, at least
three characters) or shares a content word longer than two characters with it. Guesses built on
surrogates, placeholders or hallucinations fail the test, so they never raise the level. The original
stays here: the guesser never sees it.
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
    return {w for w in _WORD.findall(s.lower()) if len(w) > 2 and w not in FUNCTION_WORDS}


class LexicalVerifier:
    def __init__(self, original: str):
        self._text = _norm(original)
        self._words = content_words(original)

    def verified(self, guess: Guess) -> bool:
        g = _norm(guess.value)
        if len(g) >= 3 and g in self._text:
            return True
        return bool(content_words(g) & self._words)
