"""Weak labels for the shipped model, and the pair → train → load → estimate path of the scripts."""

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from guardian_proxy.likelihood.weak import seed_actions, weak_label
from guardian_proxy.types import Statement

ROOT = Path(__file__).resolve().parents[3]


def st(cats, recs=(), purs=(), practice="share", negated=False):
    return Statement(id="d:1", domain="d", text="t", practice=practice, data_categories=list(cats),
                     recipients=list(recs), purposes=list(purs), negated=negated)


def test_weak_label_rule():
    share_ads = st(["contact"], ["ad_network"], ["advertising"])
    assert weak_label([share_ads], "contact", "ad_network", "advertising") == (0, "disclosed")
    assert weak_label([share_ads], "contact", "ad_network", "unknown") == (0, "disclosed")
    assert weak_label([share_ads], "health", "ad_network", "advertising") == (1, "undisclosed_category")
    assert weak_label([st(["contact"], practice="collect")], "contact", "first_party", "functionality") == \
        (0, "disclosed")
    assert weak_label([st(["contact"], practice="collect")], "contact", "analytics", "analytics") == \
        (1, "undisclosed_sharing")
    generic = st(["contact"], ["unknown_third_party"])
    assert weak_label([generic], "contact", "data_broker", "profiling") == (0, "disclosed")
    never = st(["contact"], ["data_broker"], practice="sell", negated=True)
    assert weak_label([never], "contact", "data_broker", "unknown") == (1, "denied")
    assert weak_label([never, st(["contact"], ["data_broker"], practice="sell")], "contact", "data_broker",
                      "unknown") is None
    assert weak_label([], "contact", "first_party", "functionality") == (1, "undisclosed_category")


def test_seed_actions_are_bounded_and_deterministic():
    sts = [st(["contact", "cookie"], ["ad_network"], ["advertising"])]
    a = seed_actions(sts, random.Random(1), 30)
    assert a == seed_actions(sts, random.Random(1), 30) and 0 < len(a) <= 30
    assert all(c != "other" for c, _, _ in a)


@pytest.mark.slow
def test_build_train_load_estimate(tmp_path, monkeypatch):
    """Three shipped policies → seed pairs → a small model → the router loads and uses it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_pairs
    import train_likelihood

    index = json.loads((ROOT / "guardian_proxy" / "policies" / "index.json").read_text())
    keep = [p for p in index["policies"] if p["domain"] in ("google.com", "criteo.com", "reddit.com")]
    (tmp_path / "pol" / "statements").mkdir(parents=True)
    for p in keep:
        shutil.copy(ROOT / "guardian_proxy" / "policies" / p["file"], tmp_path / "pol" / p["file"])
    (tmp_path / "pol" / "index.json").write_text(json.dumps({**index, "policies": keep}))
    pairs = tmp_path / "seed.local.pairs.jsonl"
    build_pairs.main(["seed", "--policies", str(tmp_path / "pol"), "--out", str(pairs), "--per-domain", "60"])
    lines = [json.loads(x) for x in pairs.read_text().splitlines()]
    assert len(lines) > 60 and {x["label"] for x in lines} == {0, 1}
    for x in lines:  # train on all three
        x["split"] = "train"
    pairs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "m.pt"
    report = train_likelihood.main(["--pairs", str(pairs), "--out", str(out), "--epochs", "4", "--folds", "3"])
    assert report["pairs"] == len(lines) and 0 < report["oof_threshold"]["u_threshold"] <= 1

    from guardian_proxy.likelihood.pairs import read_pairs
    from guardian_proxy.likelihood.router import EvidentialLikelihood

    stage = EvidentialLikelihood(out)
    p = read_pairs(pairs)[0]
    lk = stage.estimate(p.action, p.evidence)
    assert lk.path in ("fast", "fallback") and 0 <= lk.value <= 1
