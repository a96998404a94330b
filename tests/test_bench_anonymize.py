"""scripts/bench_anonymize.py: the PII-Masking-style set it generates and the text-precision measure."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCORE = ROOT.parent / "shared" / "score.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_anonymize", ROOT / "scripts" / "bench_anonymize.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def bench():
    return _bench()


@pytest.fixture(scope="module")
def scorer(bench):
    if not SCORE.exists():
        pytest.skip("../shared/score.py is absent")
    return bench.load_scorer(SCORE.parent)


def test_the_synthetic_set_is_reproducible_and_every_gold_value_is_in_its_text(bench):
    rows = bench.synth_rows(24)
    assert rows == bench.synth_rows(24)
    labels = {k for t in bench.SYNTH_TEMPLATES for k in re.findall(r"\{(\w+)\}", t)}
    assert {"sex", "prefix", "idcard", "state", "time"} <= labels  # the values the benchmark kept before
    for r in rows:
        assert r["gold"] and all(g in r["text"] for g in r["gold"])


def test_text_precision_counts_changed_tokens_inside_gold_strings(bench, scorer):
    gold = [{"id": "1", "text": "Mr Smith lives in Leeds and likes tea.", "gold": ["Mr Smith", "Leeds"]}]
    out = [{"id": "1", "text": "[PERSON_1] lives in [LOCATION] and likes [X]."}]
    tp = bench.text_precision(gold, out, scorer)
    assert tp["changed"] == 4 and tp["precision"] == pytest.approx(0.75) and tp["token_recall"] == 1.0


def test_the_utility_ceiling_replaces_only_gold_strings(bench, scorer):
    rows = [{"id": "1", "text": "Name: Ann Lee. Phone: 555-0100.", "gold": ["Ann Lee", "555-0100"]}]
    # tokens {name, ann, lee, phone, 555, 0100} vs {name, x, phone}: 2 shared of 7
    assert bench.gold_ceiling(rows, scorer) == pytest.approx(2 / 7)


def test_utility_parts_separate_kept_words_from_words_the_rewrite_writes(bench, scorer):
    gold = [{"id": "1", "text": "Name: Ann Lee. Phone: 555-0100.", "gold": ["Ann Lee", "555-0100"]}]
    # original {name, ann, lee, phone, 555, 0100}; the output keeps {name, phone} and writes {person_1, phone_number_1}
    out = [{"id": "1", "text": "Name: [PERSON_1]. Phone: [PHONE_NUMBER_1]."}]
    up = bench.utility_parts(gold, out, scorer)
    assert up["kept"] == pytest.approx(2 / 6) and up["ceiling_kept"] == pytest.approx(2 / 6)
    assert up["written"] == 2
    # a needless change shows as kept below the ceiling
    out = [{"id": "1", "text": "[…]: [PERSON_1]. Phone: [PHONE_NUMBER_1]."}]
    assert bench.utility_parts(gold, out, scorer)["kept"] == pytest.approx(1 / 6)
