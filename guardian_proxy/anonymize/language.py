"""Is a text English? The detectors behind the spans (spaCy's English model, English word lists) miss names
and places in other languages, so the anonymizer needs to know when its spans cannot be trusted.

Rule (stated): a text of at least 12 words in which under 8% of the words are common English function
words, and under 40% of the words of 3+ letters common English words (Zipf ≥ 3.5: a form's labels, "Gender:
… Name: … Email: …", are English), is treated as non-English. Such fields are rewritten at L5 whatever the level, and L5 then also
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


def is_non_english(text: str, min_words: int = 12, min_share: float = 0.08, min_english: float = 0.4) -> bool:
    """Few English function words, and few English words at all: a form or a list ("Gender: Male. Name: …
    Email: …") has no function words but its labels are English."""
    words = _WORD.findall(text)
    if len(words) < min_words:
        return False
    share = sum(w.lower() in FUNCTION_WORDS for w in words) / len(words)
    if share >= min_share:
        return False
    from .spans import zipf

    content = [w.lower() for w in words if len(w) >= 3]
    return not content or sum(zipf(w) >= 3.5 for w in content) / len(content) < min_english
