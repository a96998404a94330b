"""The names of public people and fictional characters (`guardian_proxy/data/public_people.txt`).

A prompt about "Bukayo Saka", "Hermione Granger" or "Springsteen" asks about them: a stand-in would make the model
answer about someone else. The list is data, written for this project from general knowledge (no dataset copied):
one name per line as English text writes it, `#` comments. `public(value)` says whether a found name is one of them:
the whole name (case, accents, a possessive and a leading title aside), a mononym the list holds alone ("Pelé",
"Beyoncé"), or a surname alone that only a public person on the list carries and that the world's name lists and
English does not use often, of six letters or more ("Springsteen", "Ohtani"; not "Khan" or "Murphy", nor "Obama":
Zipf ≥ 4, nor "Emre" of "Yunus Emre": a short one is too often a given name the lists lack). The session decides whether the
words around it tie the name to the user's own life (a cue, `session/context.py`): "my colleague Chris Evans" is
someone the user knows.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from .person_names import WORLD, faker_names
from .resources import DATA_DIR

FILE = DATA_DIR / "public_people.txt"
_TITLE = re.compile(r"^(?:mr|mrs|ms|miss|dr|sir|dame|lord|lady|saint|st|president|king|queen|pope|prince|princess)\.?\s+")


def key(value: str) -> str:
    """A name as the list is looked up: case folded, accents and a possessive dropped, spaces collapsed."""
    v = re.sub(r"['’]s$", "", value.strip())
    v = unicodedata.normalize("NFKD", v.casefold())
    v = "".join(c for c in v if not unicodedata.combining(c)).replace("’", "'")
    return " ".join(v.split())


@cache
def _names() -> tuple[frozenset[str], frozenset[str]]:
    """(every listed name's key, the surnames that name only listed public people)."""
    if not FILE.is_file():
        return frozenset(), frozenset()
    names = {key(line) for line in FILE.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")}
    from wordfreq import zipf_frequency

    last = {n.split()[-1] for n in names if " " in n}
    first = {n.split()[0] for n in names if " " in n}
    common = faker_names("last_names", locales=WORLD) | faker_names("first_names", locales=WORLD)
    surnames = {w for w in last - first if len(w) >= 6 and w not in common and zipf_frequency(w, "en") < 4.0}
    return frozenset(names), frozenset(surnames)


@cache
def _last_words() -> frozenset[str]:
    """The last word of every listed whole name."""
    return frozenset(n.split()[-1] for n in _names()[0] if " " in n)


def public(value: str, surname: bool = True) -> bool:
    """Whether `value` names a public person or a character of the list (see the module's doc); `surname`: a
    surname alone counts (not for a place's name: "Osaka" is a city before it is Naomi Osaka)."""
    k = key(value)
    if not k:
        return False
    names, surnames = _names()
    if k in names or _TITLE.sub("", k) in names:
        return True
    return surname and " " not in k and k in surnames


def named_in_full(value: str, text: str) -> bool:
    """Whether `value`, one word, is the last word of a public person's whole name that `text` also writes ("Bukayo
    Saka … then Saka went off injured"): the short mention is that person, whatever the surname's length."""
    v = value.strip()
    if not v or " " in v or key(v) not in _last_words():
        return False  # (a set lookup first: the text is read only for a word that ends a listed name)
    return any(public(m.group(0)) for m in re.finditer(
        rf"(?:[A-ZÀ-ÖØ-Þ][\w'’.-]{{0,30}}[ \t]+){{1,3}}{re.escape(v)}\b", text))
