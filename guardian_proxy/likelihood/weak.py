"""Weak labels for the shipped model: (action, evidence) labelled from the statements' structured fields.

The shipped weights may only be trained on redistributable data (the seed corpus in policies/, built from
Open Terms Archive texts, and synthetic actions); those statements have no human labels, only the fields
the evidence stage's lexicon reads. The rule below mirrors the OPP-115 labelling of scripts/build_pairs.py
with the fields in place of the annotations, applied to the statements the action retrieves:

    a statement covers (category, recipient, purpose) when it names the category, names the recipient
    class (a third-party class is also covered by generic "third parties"; a first-party collect/use
    statement naming no recipient covers first_party) and names the purpose or no purpose at all (an
    action whose purpose is unknown is covered by any);
    risky "denied"                 a negated statement covers it and no affirmative one does
    compliant "disclosed"          an affirmative statement covers it and no negated one does
    risky "undisclosed_category"   no statement shown names the category
    risky "undisclosed_sharing"    a third-party recipient and no statement shown shares the category
    otherwise (both, or the category disclosed only for other recipients/purposes): no label.
"""

from __future__ import annotations

import random

from ..types import CATEGORIES, PURPOSES, RECIPIENT_CLASSES, Statement

THIRD = frozenset(RECIPIENT_CLASSES) - {"first_party"}
FIRST_PARTY_PRACTICES = frozenset({"collect", "use", "retain", "protect"})
ACTION_CATEGORIES = tuple(c for c in CATEGORIES if c != "other")
ACTION_PURPOSES = tuple(PURPOSES)  # "unknown" included: most real actions have no declared purpose


def recipients_of(st: Statement) -> set[str]:
    recs = set(st.recipients)
    if not recs and st.practice in FIRST_PARTY_PRACTICES:
        recs = {"first_party"}
    return recs


def recipient_ok(rec: str, recs: set[str]) -> bool:
    return rec in recs or (rec in THIRD and "unknown_third_party" in recs)


def covers(st: Statement, cat: str, rec: str, pur: str) -> bool:
    if cat not in st.data_categories or not recipient_ok(rec, recipients_of(st)):
        return False
    return pur == "unknown" or not st.purposes or pur in st.purposes


def weak_label(statements: list[Statement], cat: str, rec: str, pur: str) -> tuple[int, str] | None:
    pos = any(covers(s, cat, rec, pur) and not s.negated for s in statements)
    neg = any(covers(s, cat, rec, pur) and s.negated for s in statements)
    if pos and neg:
        return None
    if neg:
        return 1, "denied"
    if pos:
        return 0, "disclosed"
    if not any(cat in s.data_categories for s in statements):
        return 1, "undisclosed_category"
    if rec in THIRD and not any(cat in s.data_categories and recipients_of(s) & THIRD for s in statements):
        return 1, "undisclosed_sharing"
    return None


def seed_actions(statements: list[Statement], rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    """Actions drawn from what the statements say (mostly disclosed) plus one-field perturbations and
    uniform draws over the vocabularies (mostly undisclosed); at most `n`, deduplicated."""
    out: set[tuple[str, str, str]] = set()
    told = [s for s in statements if s.data_categories]
    for _ in range(4 * n):
        if len(out) >= n:
            break
        r = rng.random()
        if told and r < 0.5:
            s = rng.choice(told)
            cat = rng.choice(s.data_categories)
            recs = sorted(recipients_of(s)) or ["first_party"]
            rec = rng.choice(recs)
            if rec == "unknown_third_party" and rng.random() < 0.5:
                rec = rng.choice(sorted(THIRD))
            pur = rng.choice(s.purposes) if s.purposes and rng.random() < 0.7 else rng.choice(ACTION_PURPOSES)
            if rng.random() < 0.3:  # perturb one field
                k = rng.randrange(3)
                cat = rng.choice(ACTION_CATEGORIES) if k == 0 else cat
                rec = rng.choice(RECIPIENT_CLASSES) if k == 1 else rec
                pur = rng.choice(ACTION_PURPOSES) if k == 2 else pur
        else:
            cat, rec, pur = rng.choice(ACTION_CATEGORIES), rng.choice(RECIPIENT_CLASSES), rng.choice(ACTION_PURPOSES)
        if cat == "other":
            continue
        out.add((cat, rec, pur))
    return sorted(out)
