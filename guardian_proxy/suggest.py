"""Naming a value the user mistyped: the closest known one (difflib), and the valid ones when they are few.

    unknown("recipient class", "adnetwork", RECIPIENT_CLASSES)
    → "unknown recipient class 'adnetwork' (did you mean 'ad_network'?); valid: first_party, …"

Matching is case-insensitive and treats '-' and ' ' like '_' (`Ad-Network` is `ad_network`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: past this many known values the message names the closest ones only, not the whole list
LIST_AT_MOST = 20


def _key(value: str) -> str:
    return value.strip().lower().replace("-", "_").replace(" ", "_")


def canonical(value: str, known: Iterable[str]) -> str | None:
    """The known value equal to `value` up to case, '-', ' ' and '_'; None when there is none."""
    k = _key(value)
    for v in known:
        if _key(v) == k:
            return v
    return None


def closest(value: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to n known values close to `value` (difflib, case-insensitive), best first."""
    known = list(known)
    by_key: dict[str, str] = {}
    for v in known:
        by_key.setdefault(_key(v), v)
    hits = difflib.get_close_matches(_key(value), list(by_key), n=n, cutoff=0.6)
    return [by_key[h] for h in hits]


def unknown(what: str, value: str, known: Iterable[str]) -> str:
    """One line: the unknown value, the closest known one(s), and the valid values when there are few."""
    known = list(known)
    near = closest(value, known)
    msg = f"unknown {what} {value!r}"
    if near:
        msg += " (did you mean " + " or ".join(repr(x) for x in near) + "?)"
    if len(known) <= LIST_AT_MOST:
        msg += f"; valid: {', '.join(known)}"
    return msg
