"""Features: fixed size, field/lexicon matches land in the right slot, no outgoing text used."""

import numpy as np

from guardian_proxy.likelihood.features import SLOT_NAMES, FeatureSpec, featurize
from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement, TextField


def action(cat="contact", rec="ad_network", pur="advertising", text=""):
    return Action(domain="x.com", host="x.com", categories={cat: 1}, recipient=rec, purposes=[pur],
                  fields=[TextField(path="json:$.a", text=text)] if text else [])


def evidence(*statements: Statement) -> Evidence:
    return Evidence(statements=[ScoredStatement(statement=s, score=0.9 - 0.1 * i) for i, s in enumerate(statements)])


SHARE = Statement(id="s1", domain="x.com", text="We share your email address with advertising partners.",
                  practice="share", data_categories=["contact"], recipients=["ad_network"], purposes=["advertising"])
DENY = Statement(id="s2", domain="x.com", text="We do not sell or share your email address with advertisers.",
                 practice="share", negated=True, data_categories=["contact"], recipients=["ad_network"])


def slot(vec, spec, i, name):
    return vec[spec.n_action + i * spec.n_slot + SLOT_NAMES.index(name)]


def test_size_is_fixed_and_empty_evidence_works():
    spec = FeatureSpec()
    for ev in (Evidence(), evidence(SHARE), evidence(*[SHARE] * 12)):
        v = featurize(action(), ev, spec)
        assert v.shape == (spec.dim,) and v.dtype == np.float32 and np.isfinite(v).all()
    assert spec.dim == spec.n_action + spec.slots * spec.n_slot + spec.n_summary + spec.n_hash
    assert FeatureSpec(hash_bits=8).dim == spec.dim + 256


def test_covering_statement_and_negation():
    spec = FeatureSpec()
    v = featurize(action(), evidence(SHARE, DENY), spec)
    assert slot(v, spec, 0, "full_pos_field") == 1 and slot(v, spec, 0, "full_neg_field") == 0
    assert slot(v, spec, 1, "full_neg_field") == 1 and slot(v, spec, 1, "full_pos_field") == 0
    assert slot(v, spec, 1, "neg_lex") == 1  # the lexicon reads "do not" too
    other = featurize(action(cat="health"), evidence(SHARE), spec)
    assert slot(other, spec, 0, "cat_field") == 0 and slot(other, spec, 0, "full_field") == 0


def test_generic_third_party_counts_for_a_third_party_class_only():
    spec = FeatureSpec()
    st = SHARE.model_copy(update={"recipients": ["unknown_third_party"]})
    assert slot(featurize(action(rec="analytics"), evidence(st), spec), spec, 0, "rec_generic_field") == 1
    assert slot(featurize(action(rec="first_party"), evidence(st), spec), spec, 0, "rec_generic_field") == 0


def test_outgoing_text_does_not_enter_the_features():
    spec = FeatureSpec(hash_bits=8)
    a = featurize(action(text="john@example.com secret"), evidence(SHARE), spec)
    b = featurize(action(text="something else entirely"), evidence(SHARE), spec)
    assert np.array_equal(a, b)


def _items():
    from guardian_proxy.likelihood.router import split_items

    many = Action(domain="x.com", host="x.com", categories={"contact": 1, "health": 1}, recipient="ad_network",
                  purposes=["advertising", "analytics", "profiling"])
    return split_items(many)


GENERIC = Statement(id="s3", domain="x.com", text="We may disclose information to third parties for analytics.",
                    practice="share", data_categories=["other"], recipients=["unknown_third_party"])


def test_featurize_items_equals_featurize_per_item():
    """The router's category × purpose items share one reading of each statement; the
    rows are the ones featurize gives item by item, with and without the statement reader."""
    from guardian_proxy.config import load_settings
    from guardian_proxy.likelihood import checkpoint, model_path
    from guardian_proxy.likelihood.features import featurize_items

    ev = evidence(SHARE, DENY, GENERIC)
    items = _items()
    assert len(items) == 6
    for spec in (FeatureSpec(), FeatureSpec(hash_bits=8), checkpoint.load(model_path(load_settings())).spec):
        rows = featurize_items(items, ev, spec)
        assert np.array_equal(rows, np.stack([featurize(a, ev, spec) for a in items]))
        assert np.array_equal(featurize_items(items, Evidence(), spec),
                              np.stack([featurize(a, Evidence(), spec) for a in items]))


def test_each_statement_is_read_once_per_request(monkeypatch):
    """0.58 ms of a deny request went to reading each statement again for each of its 6 items."""
    from guardian_proxy.likelihood import features
    from guardian_proxy.likelihood import reader as rd

    calls = []
    reader = rd.Reader(np.full((1 << 6, len(rd.OUTPUTS)), 0.01, np.float32), np.zeros(len(rd.OUTPUTS), np.float32), 6)
    probs = reader.probs
    reader.probs = lambda text: (calls.append(text), probs(text))[1]
    lex = features.read
    monkeypatch.setattr(features, "read", lambda text: (calls.append(text), lex(text))[1])
    features.featurize_items(_items(), evidence(SHARE, DENY, GENERIC), FeatureSpec(reader=reader))
    assert sorted(calls) == sorted([SHARE.text, DENY.text, GENERIC.text] * 2)  # lexicon + reader, once each


def test_inputs_key_covers_what_the_features_read():
    """The router keeps model outputs by `inputs_key`: each input featurize reads changes the key (and the rows),
    what it does not read (host, the outgoing text, a statement's id) leaves both unchanged."""
    from guardian_proxy.config import load_settings
    from guardian_proxy.likelihood import checkpoint, model_path
    from guardian_proxy.likelihood.features import featurize_items, inputs_key

    spec = checkpoint.load(model_path(load_settings())).spec
    base_items, base_ev = [action()], evidence(SHARE, DENY)

    def both(items, ev):
        return inputs_key(items, ev, spec), featurize_items(items, ev, spec)

    key0, rows0 = both(base_items, base_ev)
    changed = {
        "category": ([action(cat="health")], base_ev), "recipient": ([action(rec="data_broker")], base_ev),
        "purpose": ([action(pur="analytics")], base_ev),
        "basis": ([action().model_copy(update={"basis": "consent"})], base_ev),
        "text": (base_items, evidence(SHARE.model_copy(update={"text": "We sell your address to brokers."}), DENY)),
        "practice": (base_items, evidence(SHARE.model_copy(update={"practice": "collect", "recipients": []}), DENY)),
        "st_categories": (base_items, evidence(SHARE.model_copy(update={"data_categories": ["health"]}), DENY)),
        "st_recipients": (base_items, evidence(SHARE.model_copy(update={"recipients": ["analytics"]}), DENY)),
        "st_purposes": (base_items, evidence(SHARE.model_copy(update={"purposes": ["analytics"]}), DENY)),
        "negated": (base_items, evidence(SHARE.model_copy(update={"negated": True}), DENY)),
        "score": (base_items, Evidence(statements=[ScoredStatement(statement=SHARE, score=0.5),
                                                   ScoredStatement(statement=DENY, score=0.8)])),
    }
    for what, (items, ev) in changed.items():
        key, rows = both(items, ev)
        assert key != key0, what
        assert not np.array_equal(rows, rows0), what
    same = {"host": [action().model_copy(update={"host": "y.x.com", "domain": "x.com"})],
            "outgoing text": [action(text="jane.doe@example.com")]}
    for what, items in same.items():
        key, rows = both(items, base_ev)
        assert key == key0 and np.array_equal(rows, rows0), what
    key, rows = both(base_items, evidence(SHARE.model_copy(update={"id": "other"}), DENY))
    assert key == key0 and np.array_equal(rows, rows0)
    hashable = {key0}
    assert key0 in hashable
