"""The statement reader (docs/design/likelihood.md): the likelihood reads the statement's text, not only its
fields.

Targets from gold annotations, a reader trained on a few sentences reads new wording, its probabilities
join the slots with the OPP-115 coverage rule (category × recipient × purpose), the checkpoint carries it
and rejects a bad one, and the shipped model agrees with OPP-115's annotators on runtime-like pairs.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from guardian_proxy.config import load_settings
from guardian_proxy.errors import ModelLoadError
from guardian_proxy.likelihood import checkpoint, model_path
from guardian_proxy.likelihood import reader as rd
from guardian_proxy.likelihood.features import READ_SLOT_NAMES, SLOT_NAMES, FeatureSpec, featurize
from guardian_proxy.likelihood.model import EvidentialMLP
from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement

ROOT = Path(__file__).resolve().parents[3]
OPP = ROOT.parent / "shared" / "data" / "opp115"


def ann(cat, recs=("first_party",), purpose=None, does=True):
    return {"category": cat, "recipients": list(recs), "purpose": purpose, "does": does}


def test_targets_from_annotations():
    y = rd.targets([ann("contact", ("ad_network", "unknown_third_party"), "advertising"),
                    ann("health", does=False)])
    on = {k for k, v in zip(rd.OUTPUTS, y, strict=True) if v}
    assert on == {"named:contact", "third:contact", "third_purpose:advertising", "named:health", "first_party",
                  "first_purpose:unspecified", "does_not", "any"}
    assert not rd.targets([]).any()


class FixedReader:
    """Probabilities set by hand (a unit double for the trained reader)."""

    def __init__(self, **on):
        self.p = np.zeros(len(rd.OUTPUTS), dtype=np.float32)
        for k, v in on.items():
            self.p[rd.INDEX[k.replace("__", ":")]] = v

    def probs(self, text):
        return self.p


def act(cat="contact", rec="ad_network", pur="advertising"):
    return Action(domain="x.com", host="x.com", categories={cat: 1}, recipient=rec, purposes=[pur])


ST = Statement(id="x:1", domain="x.com", text="Some statement.")
EV = Evidence(statements=[ScoredStatement(statement=ST, score=0.9)])


def read(vec, spec, name, i=0):
    return vec[spec.n_action + i * spec.n_slot + len(SLOT_NAMES) + READ_SLOT_NAMES.index(name)]


def test_reader_slot_follows_the_coverage_rule():
    spec = FeatureSpec(reader=FixedReader(named__contact=1, third__contact=0.8, third_purpose__advertising=0.5))
    assert spec.dim > FeatureSpec().dim
    v = featurize(act(), EV, spec)
    assert read(v, spec, "read_cat") == 1 and read(v, spec, "read_cat_rec") == pytest.approx(0.8)
    assert read(v, spec, "read_full") == pytest.approx(0.4)
    # an ad network is covered by an advertising purpose, not by an analytics one (build_pairs THIRD_BY_PURPOSE)
    assert read(featurize(act(pur="analytics"), EV, spec), spec, "read_full") == 0
    # a purpose nobody declared (most real requests) is covered by any statement
    assert read(featurize(act(pur="unknown"), EV, spec), spec, "read_full") == pytest.approx(0.8)
    # the first party needs a first-party reading, another category its own
    assert read(featurize(act(rec="first_party"), EV, spec), spec, "read_cat_rec") == 0
    assert read(featurize(act(cat="health"), EV, spec), spec, "read_cat") == 0
    neg = FeatureSpec(reader=FixedReader(named__contact=1, third__contact=1, third_purpose__unspecified=1, does_not=1))
    v = featurize(act(), EV, neg)
    assert read(v, neg, "read_full_neg") == 1 and read(v, neg, "read_full_pos") == 0


def test_reader_learns_wording_not_fields():
    texts, ys = [], []
    for w in ("email address", "phone number", "mailing address", "e-mail"):
        texts.append(f"We may share your {w} with advertising partners.")
        ys.append(rd.targets([ann("contact", ("ad_network",), "advertising")]))
        texts.append(f"We collect your {w} to provide the service.")
        ys.append(rd.targets([ann("contact", ("first_party",), "functionality")]))
    for w in ("The site was founded in 1999.", "Contact us with questions.", "This page was updated.",
              "Thank you for visiting."):
        texts.append(w)
        ys.append(rd.targets([]))
    reader = rd.train(texts, np.stack(ys), bits=10, epochs=60, lr=0.1)
    p = reader.probs("We share your phone number with our advertising partners.")
    q = reader.probs("The site was updated in 2001.")
    i = rd.INDEX
    assert p[i["third:contact"]] > 0.5 > q[i["third:contact"]]
    assert p[i["third_purpose:advertising"]] > q[i["third_purpose:advertising"]]
    assert reader.probs("We share your phone number with our advertising partners.") is p  # cached per text
    again = rd.train(texts, np.stack(ys), bits=10, epochs=60, lr=0.1)
    assert np.array_equal(again.weight, reader.weight)  # seeded: training is reproducible


def test_char_grams_link_spellings_of_one_word():
    a, b = rd.char_grams("E-mail"), rd.char_grams("emails")
    assert all(g.startswith("#") for g in a | b)  # never the hash of a word gram
    assert {"# e", "#mail", "#mail "} <= a and "#mail" in b and "#il " not in b  # inside padded words only
    assert rd.char_grams("") == set()


def test_char_block_joins_the_word_block():
    ids, w = rd.hashed("We share your e-mail address.", 12)
    cids, cw = rd.hashed("We share your e-mail address.", 12, chars=True)
    assert len(cids) > len(ids) and float(np.dot(w, w)) == pytest.approx(1.0)
    assert float(np.dot(cw, cw)) == pytest.approx(1.0)  # two blocks of norm 1, each weighing 1/√2
    assert np.allclose(cw[: len(ids)] * np.sqrt(2), w)


def test_char_reader_reads_a_spelling_it_never_saw():
    """Trained on "email" only, the word reader cannot read "e-mails"; the character n-grams can."""
    texts = ["We share your email with advertisers.", "We share your cookies with advertisers.",
             "We collect your email.", "Our offices are in Ohio.", "Thank you for visiting."]
    ys = np.stack([rd.targets(a) for a in ([ann("contact", ("ad_network",))], [ann("cookie", ("ad_network",))],
                                           [ann("contact")], [], [])])
    words = rd.train(texts, ys, bits=12, epochs=80, lr=0.1)
    chars = rd.train(texts, ys, bits=12, epochs=80, lr=0.1, chars=True)
    i = rd.INDEX["named:contact"]
    assert chars.chars and not words.chars
    seen = chars.probs("E-mails are kept.")[i]
    assert seen > 2 * words.probs("E-mails are kept.")[i] and seen > 10 * chars.probs("Cookies are kept.")[i]


def test_checkpoint_keeps_the_char_reader(tmp_path):
    reader = rd.Reader(np.random.default_rng(0).normal(size=(1 << 6, len(rd.OUTPUTS))).astype(np.float32),
                       np.zeros(len(rd.OUTPUTS), np.float32), 6, chars=True)
    spec = FeatureSpec(reader=reader)
    p = tmp_path / "c.pt"
    checkpoint.save(p, EvidentialMLP(spec.dim, 16, 0.0, spec.layout()), spec, 0.5, {"trained_on": ["test"]})
    text = "We share your e-mail address."
    for f in (p, checkpoint.npz_path(p)):
        got = checkpoint.load(f).spec.reader
        assert got.chars and np.allclose(got.probs(text), reader.probs(text), atol=5e-3)  # float16 weights
    ck = torch.load(p, weights_only=True)
    del ck["reader"]["chars"]  # a checkpoint from before the character n-grams reads words only
    torch.save(ck, p)
    assert not checkpoint.load(p).spec.reader.chars


def saved_with_reader(tmp_path) -> Path:
    reader = rd.Reader(np.full((1 << 6, len(rd.OUTPUTS)), 0.01, np.float32), np.zeros(len(rd.OUTPUTS), np.float32), 6)
    spec = FeatureSpec(reader=reader)
    p = tmp_path / "r.pt"
    checkpoint.save(p, EvidentialMLP(spec.dim, 16, 0.0, spec.layout()), spec, 0.5, {"trained_on": ["test"]})
    return p


def test_checkpoint_carries_the_reader(tmp_path):
    lm = checkpoint.load(saved_with_reader(tmp_path))
    assert lm.spec.reader is not None and lm.spec.reader.bits == 6
    assert featurize(act(), EV, lm.spec).shape == (lm.spec.dim,)


@pytest.mark.parametrize("damage, match", [
    (lambda r: r["weight"].__setitem__((0, 0), float("nan")), "NaN"),
    (lambda r: r.__setitem__("outputs", ["x"]), "outputs differ"),
    (lambda r: r.__setitem__("weight", torch.zeros(3, 3)), "malformed statement reader"),
    (lambda r: r.pop("bias"), "malformed statement reader"),
])
def test_bad_reader_fails_at_load(tmp_path, damage, match):
    p = saved_with_reader(tmp_path)
    ck = torch.load(p, weights_only=True)
    damage(ck["reader"])
    torch.save(ck, p)
    with pytest.raises(ModelLoadError, match=match):
        checkpoint.load(p)


def test_shipped_model_reads_statements():
    lm = checkpoint.load(model_path(load_settings()))
    assert lm.spec.reader is not None and "opp115" in lm.meta["trained_on"]
    assert lm.path.stat().st_size < 4_000_000
    p = lm.spec.reader.probs("We may share your email address and phone number with our advertising partners.")
    assert p[rd.INDEX["third:contact"]] > p[rd.INDEX["third:health"]]


@pytest.mark.slow
@pytest.mark.skipif(not OPP.is_dir(), reason="../shared/data/opp115 is absent")
def test_shipped_model_agrees_with_opp115_annotators_on_runtime_like_pairs():
    """The shipped model (seed corpus, weak labels) agreed on 0.729 of the test split's
    runtime-like pairs (statement fields read from the text); trained on OPP-115 with the reader it must
    do clearly better. Held-out policies only (id divisible by 5)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_pairs

    from guardian_proxy.likelihood.router import EvidentialLikelihood

    pairs = [p for p in build_pairs.opp115_pairs(OPP, 36, 0, "text") if p["split"] == "test"]
    stage = EvidentialLikelihood(model_path(load_settings()))
    hits = fast = 0
    for p in pairs:
        a = p["action"]
        lk = stage.estimate(Action(domain=a["domain"], host=a["host"], categories=a["categories"],
                                   recipient=a["recipient"], purposes=a["purposes"], basis=a["basis"]),
                            Evidence.model_validate(p["evidence"]))
        hits += (lk.risky_mass >= 0.5) == p["label"]
        fast += lk.path == "fast"
    assert len(pairs) > 1000
    assert hits / len(pairs) >= 0.80
    assert fast / len(pairs) >= 0.95


@pytest.mark.slow
def test_train_script_stacks_the_reader_and_fills_the_vocabulary(tmp_path):
    """--statements trains a reader (out-of-fold for the classifier's features) into the checkpoint (with
    --reader-chars, one that reads character n-grams too);
    --fill-pairs adds only pairs whose action uses a value the main pairs never do."""
    import json
    import shutil

    sys.path.insert(0, str(ROOT / "scripts"))
    import build_pairs
    import train_likelihood

    index = json.loads((ROOT / "guardian_proxy" / "policies" / "index.json").read_text())
    keep = [p for p in index["policies"] if p["domain"] in ("google.com", "criteo.com", "reddit.com")]
    (tmp_path / "pol" / "statements").mkdir(parents=True)
    for p in keep:
        shutil.copy(ROOT / "guardian_proxy" / "policies" / p["file"], tmp_path / "pol" / p["file"])
    (tmp_path / "pol" / "index.json").write_text(json.dumps({**index, "policies": keep}))
    seed = tmp_path / "seed.local.pairs.jsonl"
    build_pairs.main(["seed", "--policies", str(tmp_path / "pol"), "--out", str(seed), "--per-domain", "60"])
    lines = [json.loads(x) for x in seed.read_text().splitlines()]
    main = [dict(x, split="train", source="opp115") for x in lines if x["action"]["purposes"] != ["unknown"]]
    fill = [dict(x, split="train") for x in lines]
    (tmp_path / "main.jsonl").write_text("".join(json.dumps(x) + "\n" for x in main))
    (tmp_path / "fill.jsonl").write_text("".join(json.dumps(x) + "\n" for x in fill))
    policy_of = {s["statement"]["text"]: x["policy"] for x in main for s in x["evidence"].get("statements", [])}
    sts = [{"id": str(i), "policy": pol, "split": "train", "text": t,
            "anns": [ann("contact", ("ad_network",), "advertising")] if "advertis" in t.lower() else []}
           for i, (t, pol) in enumerate(sorted(policy_of.items()))]
    (tmp_path / "st.jsonl").write_text("".join(json.dumps(x) + "\n" for x in sts))
    out = tmp_path / "m.pt"
    report = train_likelihood.main(["--pairs", str(tmp_path / "main.jsonl"), "--fill-pairs", str(tmp_path / "fill.jsonl"),
                                    "--statements", str(tmp_path / "st.jsonl"), "--reader-bits", "8", "--reader-chars",
                                    "--reader-epochs", "2", "--epochs", "2", "--folds", "2", "--out", str(out)])
    def values(x):
        a = x["action"]
        return {*a["categories"], a["recipient"], *a["purposes"]}

    seen = set().union(*map(values, main))
    n_new = sum(bool(x["evidence"].get("statements")) and not values(x) <= seen for x in lines)
    assert report["fill_pairs"] == n_new > 0 and report["pairs"] == len(main) + n_new
    lm = checkpoint.load(out)
    assert lm.spec.reader is not None and lm.spec.reader.bits == 8 and lm.meta["reader"]["statements"] == len(sts)
    assert lm.spec.reader.chars and lm.meta["reader"]["chars"]  # --reader-chars reaches the shipped reader
