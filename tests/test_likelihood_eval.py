"""scripts/eval_likelihood.py's measurements besides accuracy: the escalation sweep (does u rank the errors?), the
reader's average precision, and the annotators' consistency on a sentence repeated across policies."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import eval_likelihood as ev  # noqa: E402

from guardian_proxy.likelihood import reader as rd  # noqa: E402


def test_escalation_sweep_drops_the_most_uncertain_first():
    # (risky mass, u, label): the two wrong answers are the most uncertain
    records = [(0.9, 0.9, 0), (0.2, 0.8, 1), (0.8, 0.1, 1), (0.1, 0.2, 0), (0.7, 0.3, 1)]
    sweep = ev.escalation_sweep(records, shares=(0.0, 0.2, 0.4))
    assert sweep == {"0%": 0.6, "20%": 0.75, "40%": 1.0}


def test_average_precision_matches_its_definition():
    y = [1, 0, 1, 0, 0, 1]
    s = [0.9, 0.8, 0.7, 0.7, 0.1, 0.05]
    # thresholds 0.9 (P 1, R 1/3), 0.8 (1/2, 1/3), 0.7 (2/4, 2/3: the tie counts together), 0.1, 0.05 (3/6, 1)
    assert ev.average_precision(y, s) == pytest.approx(1 / 3 * 1 + 1 / 3 * 0.5 + 1 / 3 * 0.5)
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 200), rng.integers(0, 20, 200) / 20  # many ties
    assert ev.average_precision(y, s) == pytest.approx(sklearn.average_precision_score(y, s))


def ann(cat):
    return {"category": cat, "recipients": ["first_party"], "purpose": None, "does": True}


def test_reader_quality_scores_the_outputs_with_positives():
    rows = [{"text": f"We collect your email {i}.", "anns": [ann("contact")]} for i in range(3)] + [
        {"text": f"Welcome {i}.", "anns": []} for i in range(3)]

    class Perfect:
        def probs(self, text):
            return rd.targets([ann("contact")] if "email" in text else []) * 0.98 + 0.01

    q = ev.reader_quality(Perfect(), rows)
    assert q["statements"] == 6 and q["mean_average_precision"] == 1.0
    assert set(q["average_precision"]) == {k for k, v in zip(rd.OUTPUTS, rd.targets([ann("contact")]), strict=True) if v}
    assert 0 < q["log_loss"] < 0.02


def test_duplicate_agreement_counts_texts_repeated_across_policies():
    rows = [
        {"policy": 1, "text": "We use cookies.", "anns": [ann("cookie")]},
        {"policy": 2, "text": "We use  Cookies!", "anns": []},  # the same text, not annotated there
        {"policy": 1, "text": "We collect your e-mail.", "anns": [ann("contact")]},
        {"policy": 3, "text": "we collect your e mail", "anns": [ann("contact"), ann("identity")]},
        {"policy": 1, "text": "Only in one policy.", "anns": [ann("health")]},
        {"policy": 1, "text": "Only in one policy.", "anns": []},  # twice in one policy: not a repeat
    ]
    got = ev.duplicate_agreement(rows)
    assert got["texts_in_several_policies"] == 2 and got["annotated_somewhere"] == 2
    assert got["annotated_in_every_copy"] == 0.5
    assert got["category_named_in_every_copy"] == round(1 / 3, 3)  # cookie no, contact yes, identity no
