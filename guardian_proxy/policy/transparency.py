"""Transparency: how well a destination's policy discloses what an action does (the MT factor's input).

For an action with data categories C, recipient class r and purposes P (its "unknown" purpose aside),
over every statement of the destination's policy:

    none     no policy is known for the destination (or its owner)
    full     every category in C is named by a statement that also names r or one of P (a joint
             disclosure), r is named somewhere, and every purpose in P is named somewhere
             (with P empty: some statement naming a category in C states a purpose)
    partial  the policy names at least one category of C, the recipient class, or a purpose of P
    vague    the policy exists but speaks only in generic terms ("personal information",
             "third parties") about what this action involves

"Named" means a specific value of the field. For a first-party destination the recipient is named by
any statement of its own collection or use (the destination is the recipient). The generic category
`other` in C is covered by any statement that names a data category.
"""

from __future__ import annotations

import numpy as np

from ..types import CATEGORIES, PURPOSES, RECIPIENT_CLASSES
from .retrieval import PolicyIndex, Query

OTHER = CATEGORIES.index("other")


def level(index: PolicyIndex | None, q: Query) -> str:
    if index is None or not index.statements:
        return "none"
    cats = [c for c in q.categories if c != "other"]
    has_any_cat = index.cat[:, :OTHER].sum(axis=1) > 0
    cat_rows = [index.cat[:, CATEGORIES.index(c)] > 0 for c in cats]
    if "other" in q.categories and not cats:
        cat_rows = [has_any_cat]
    rec_rows = np.zeros(len(index.statements), dtype=bool)
    for r in q.recipients:
        rec_rows |= index.rec[:, RECIPIENT_CLASSES.index(r)] > 0
    purp_cols = [PURPOSES.index(p) for p in q.purposes]
    purp_rows = [index.purp[:, j] > 0 for j in purp_cols]
    any_purp = (index.purp.sum(axis=1) > 0)
    purp_or = np.zeros(len(index.statements), dtype=bool)
    for row in purp_rows:
        purp_or |= row

    cat_named = [bool(r.any()) for r in cat_rows]
    rec_named = bool(rec_rows.any())
    purp_named = [bool(r.any()) for r in purp_rows]

    joint = bool(cat_rows) and all(bool((r & (rec_rows | purp_or)).any()) for r in cat_rows)
    if purp_rows:
        purp_ok = all(purp_named)
    else:
        mentions = np.zeros(len(index.statements), dtype=bool)
        for r in cat_rows:
            mentions |= r
        purp_ok = bool((mentions & any_purp).any())
    if joint and rec_named and purp_ok and all(cat_named):
        return "full"
    generic_rec = set(q.recipients) <= {"unknown_third_party"}
    if any(cat_named) or (rec_named and not generic_rec) or any(purp_named):
        return "partial"
    return "vague"
