"""The names of well-known organisations, brands, products, services and works (`guardian_proxy/data/public_orgs.txt`).

"Medicare approved $312", "message him on WhatsApp", "a 2019 Nissan Leaf", "the Deutsche Bahn app", "Pride and
Prejudice": a stand-in there ("Green LLC approved $312") changes what the user asks and says nothing of anyone. The
list is data, written for this project from general knowledge (no dataset copied): one name per line as English text
writes it, `#` comments. It holds public bodies and programmes, companies and their products, clubs and leagues,
bands, events and famous works; not people (`public_people.txt`), medicines (health data), schools, universities or
hospitals (where someone studies or is treated says something of them), nor places. `public_org(value)` says whether
a found value is one of them, whole (case, accents, a possessive and a leading "the" aside). Being one of millions
of a bank's customers or an airline's passengers is no one's identity; the session still replaces a name the
conversation already holds as someone's (`session/context.py`).
"""

from __future__ import annotations

import re
from functools import cache

from .public_people import key
from .resources import DATA_DIR

FILE = DATA_DIR / "public_orgs.txt"
_THE = re.compile(r"^the\s+")


@cache
def _names() -> tuple[frozenset[str], frozenset[str]]:
    """(every listed name's key, the short acronyms: "WHO", "ICE" and "EE" name a body only as written)."""
    if not FILE.is_file():
        return frozenset(), frozenset()
    lines = [line.strip() for line in FILE.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    acronyms = frozenset(v for v in lines if len(v) <= 4 and v.isupper())
    return frozenset(_THE.sub("", key(v)) for v in lines if v not in acronyms), acronyms


def public_org(value: str) -> bool:
    """Whether `value` names an organisation, brand, product or work of the list (see the module's doc)."""
    names, acronyms = _names()
    v = value.strip().rstrip(".,;:")
    if v in acronyms:
        return True
    k = _THE.sub("", key(v))
    return bool(k) and k in names
