"""The live view's filter: one line of terms, every term must match (AND), case does not matter.

    host:shop.example        the host contains this text
    action:blocked           allow|allowed, transform|rewritten, deny|blocked (a word or the log's name)
    category:contact         the decision carries this category (a prefix is enough: `cat:fin`)
    recipient:ad network     the recipient class contains this text (`_` and space alike): ad_network, analytics …
    site:shop.example        the page that made the request (the per-site view's key)
    app:curl                 the program that sent it (guardian_proxy/procinfo.py): part of its name (`app:python3`,
                             `app:agent.py`, `app:"python3 agent.py"`), its executable's name, its pid, or
                             `app:remote` / `app:unknown`
    data:yes                 the request carried personal data (a category was found); data:no the others
                             (the live table's "only with personal data" switch sends data:yes)
    anything else            a word found in the host, path, recipient, categories, verdict or explanation

`-term` negates a term (`-action:allowed`). The same filter serves the snapshot, the event stream (a
subscriber only gets what matches) and the per-site view, so the page and the API never disagree.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

KEYS = {"host": "host", "h": "host", "action": "action", "a": "action", "category": "category", "cat": "category",
        "c": "category", "recipient": "recipient", "r": "recipient", "to": "recipient", "site": "site",
        "page": "site", "data": "data", "personal": "data", "app": "app", "program": "app"}
ACTION_WORDS = {"allow": "allow", "allowed": "allow", "transform": "transform", "rewritten": "transform",
                "rewrite": "transform", "deny": "deny", "denied": "deny", "blocked": "deny", "block": "deny"}


def _norm(text) -> str:
    return str(text or "").lower().replace("_", " ")


@dataclass
class Query:
    terms: list[tuple[str, str, bool]] = field(default_factory=list)  # (key or "", value, negated)
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __call__(self, rec: dict) -> bool:
        return all(_term(rec, k, v) != neg for k, v, neg in self.terms)


def parse(text: str | None) -> Query:
    """A Query from the filter line; an unknown `key:` is a plain word; ValueError for a bad action."""
    text = (text or "").strip()
    try:
        parts = shlex.split(text)
    except ValueError:  # an unclosed quote: take the words as they are
        parts = text.split()
    terms = []
    for p in parts:
        neg = p.startswith("-") and len(p) > 1
        p = p[1:] if neg else p
        key, sep, value = p.partition(":")
        k = KEYS.get(key.lower()) if sep else None
        if k is None:
            terms.append(("", _norm(p), neg))
            continue
        value = value.strip()
        if not value:
            continue
        if k == "data":
            if value.lower() not in DATA_WORDS:
                raise ValueError(f"data:{value}? use data:yes or data:no")
            terms.append((k, DATA_WORDS[value.lower()], neg))
            continue
        if k == "action":
            if value.lower() not in ACTION_WORDS:
                raise ValueError(f"action:{value}? use allowed, rewritten or blocked")
            value = ACTION_WORDS[value.lower()]
        terms.append((k, _norm(value) if k != "action" else value, neg))
    return Query(terms, text)


DATA_WORDS = {"yes": "yes", "y": "yes", "true": "yes", "1": "yes", "no": "no", "n": "no", "none": "no", "false": "no",
              "0": "no"}


def carries_data(rec: dict) -> bool:
    """A category of personal data was found in it; "unparsed" (a body that could not be read) counts: what it
    holds is not known, so the switch never hides it."""
    return any(isinstance(n, int | float) and n > 0 for c, n in (rec.get("categories") or {}).items())


def _term(rec: dict, key: str, value: str) -> bool:
    if key == "data":
        return carries_data(rec) == (value == "yes")
    if key == "action":
        return rec.get("action") == value
    if key == "host":
        return value in _norm(rec.get("host"))
    if key == "site":
        return value in _norm(rec.get("site"))
    if key == "recipient":
        return value in _norm(rec.get("recipient"))
    if key == "app":
        from ..cli.filters import app_matches

        return app_matches(rec.get("app"), value) or app_matches(rec.get("app"), value.replace(" ", "_"))
    cats = [_norm(c) for c, n in (rec.get("categories") or {}).items() if isinstance(n, int | float) and n > 0]
    if key == "category":
        return any(c.startswith(value) for c in cats)
    hay = " ".join([_norm(rec.get(f)) for f in ("host", "path", "recipient", "site", "verdict", "why", "explanation")]
                   + cats + [ACTION_WORDS_BACK.get(rec.get("action"), ""), _norm(_app_name(rec))])
    return value in hay


ACTION_WORDS_BACK = {"allow": "allowed", "transform": "rewritten", "deny": "blocked"}


def _app_name(rec: dict) -> str:
    app = rec.get("app")
    return str(app.get("name") or "") if isinstance(app, dict) else ""
