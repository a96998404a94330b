"""scripts/bench_prompts.py: the judge of a prompt's words (needless, personal, leaks), and one real run."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import bench_prompts as bp  # noqa: E402


def test_judge_counts_words_inside_and_outside_personal_values():
    case = {"text": "I'm Quentin Zarkowsky and my Django app fails", "personal": ["Quentin Zarkowsky"]}
    r = bp.judge(case, "I'm Alex Smith and my Django app fails")
    assert (r["needless"], r["personal_words"], r["other_words"], r["leaks"]) == (False, 2, 0, [])
    r = bp.judge(case, "I'm Alex Smith and my Laura app fails")
    assert r["needless"] and r["changed"] == ["Django"]
    r = bp.judge(case, case["text"])
    assert r["leaks"] == ["Quentin Zarkowsky"] and not r["needless"]
    assert bp.judge(case, None)["blocked"]
    either = {"text": "Tomasz turns 40 on Friday", "personal": ["Tomasz"], "either": ["40"]}
    assert not bp.judge(either, "Jakub turns 41 on Friday")["needless"]


def test_both_sets_load():
    dev = bp.load("dev")
    holdout = [c for name in bp.CORPORA if name != "dev" and name not in bp.UNSCORED for c in bp.load(name)]
    assert len(dev) >= 50 and len(holdout) >= 150 and len(bp.load("all")) == len(dev) + len(holdout)
    fresh = [c for name in bp.UNSCORED for c in bp.load(name)]  # written, not scored: `all` leaves them out
    holdout += fresh
    for c in dev + holdout:
        assert c["kind"] in {"code", "facts", "personal"} and all(str(v) in c["text"] for v in c["personal"])


@pytest.mark.slow
def test_a_real_run_prints_the_three_numbers(capsys):
    assert bp.main(["--set", "holdout", "--only", "code"]) == 0
    out = capsys.readouterr().out
    assert "needless" in out and "precision" in out and "leaks" in out


def test_the_same_prompt_in_each_framing():
    for api in bp.SHAPES:
        req = bp.request("Hi, I'm Quentin Zarkowsky", 1, api)
        body = json.loads(req.body)
        assert bp.SHAPES[api][2](body) == "Hi, I'm Quentin Zarkowsky" and req.host in bp.SHAPES[api][0]
    assert bp._changed_words("my Django app", "my Laura app") == {"Django"}
    assert bp._changed_words("my Django app", None) == {"my", "Django", "app"}


def test_a_value_partly_left_is_counted():
    case = {"text": "My colleague Min-jun Park helps", "personal": ["Min-jun Park"]}
    r = bp.judge(case, "My colleague Min-alison Robbins helps")
    assert r["partly"] == ["Min-jun Park"] and r["leaks"] == []
    assert bp.judge(case, "My colleague Katherine Malone helps")["partly"] == []
    assert bp.judge({"text": "ID EMP-48213", "personal": ["EMP-48213"]}, "ID EMP-90211")["partly"] == []
