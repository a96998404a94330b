"""Is a text English? The detectors behind the spans (spaCy's English model, English word lists) miss names
and places in other languages, so the anonymizer needs to know when its spans cannot be trusted.

Rule (stated): a text of at least 12 words in which under 8% of the words are common English function
words is treated as non-English. Such fields are rewritten at L5 whatever the level, and L5 then also
hides every word that is rare in English (Zipf < 3) — most content words of a foreign text — so
nothing identifying leaves on the strength of an English model's silence. Shorter texts are treated as
English (too little to judge; the spans found still apply).
"""

from __future__ import annotations

import regex as re

FUNCTION_WORDS = frozenset(
    "the and of to a in is that for it was on with as he she his her by at from this be are have has had not or an "
    "which were they you we my our but their them there been would will can could should if when who what all "
    "so no its into than then also about after before these those any some more other such only i me us your "
    "him do does did how where why just up out over under between while".split()
)
_WORD = re.compile(r"\p{L}[\p{L}'’]*")


def is_non_english(text: str, min_words: int = 12, min_share: float = 0.08) -> bool:
    words = _WORD.findall(text)
    if len(words) < min_words:
        return False
    share = sum(w.lower() in FUNCTION_WORDS for w in words) / len(words)
    return share < min_share
