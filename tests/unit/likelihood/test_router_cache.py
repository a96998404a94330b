"""The fast path's bounded cache: a repeated (items, policy statements) batch gives the same values without
featurizing again; any input the features read is part of the key; the size stays bounded."""

from guardian_proxy.config import load_settings
from guardian_proxy.likelihood import model_path, router
from guardian_proxy.likelihood.router import EvidentialLikelihood
from guardian_proxy.types import Action, Evidence, ScoredStatement, Statement, TextField

SHIPPED = model_path(load_settings())
COVER = Statement(id="x.com:0001", domain="x.com", practice="share", text="We share your email address with "
                  "advertising partners to show you ads.", data_categories=["contact"], recipients=["ad_network"],
                  purposes=["advertising"])


def action(cats, rec="ad_network", value="jane.doe@example.com"):
    return Action(domain="x.com", host="x.com", categories=cats, recipient=rec, purposes=["advertising"],
                  fields=[TextField(path="json:$.e", text=value)])


def evidence(score=0.9):
    return Evidence(statements=[ScoredStatement(statement=COVER, score=score)], transparency="full")


def counting(monkeypatch):
    calls = []
    real = router.featurize_items
    monkeypatch.setattr(router, "featurize_items", lambda items, ev, spec: (calls.append(1), real(items, ev, spec))[1])
    return calls


def test_a_repeated_batch_is_not_featurized_again_and_gives_the_same_values(monkeypatch):
    calls = counting(monkeypatch)
    cached, fresh = EvidentialLikelihood(SHIPPED), EvidentialLikelihood(SHIPPED)
    cases = [(action({"contact": 1}), evidence()), (action({"contact": 1, "health": 2}), evidence()),
             (action({"contact": 1}, rec="data_broker"), evidence()), (action({"contact": 1}), evidence(0.4)),
             (action({"contact": 1}, rec="analytics"), evidence())]
    first = [cached.estimate(a, e) for a, e in cases]
    assert all(lk.path == "fast" for lk in first)
    assert len(calls) == len(cases)  # each a different key
    again = [cached.estimate(a.model_copy(update={"fields": [TextField(path="json:$.e", text="other@example.org")]}),
                             e) for a, e in cases]
    assert len(calls) == len(cases)  # the outgoing values are not in the key: all hits
    assert again == first
    for (a, e), lk in zip(cases, first, strict=True):
        fresh._cache.clear()
        assert fresh.estimate(a, e) == lk  # bit for bit what an empty cache computes


def test_the_cache_is_bounded_and_drops_the_least_recent(monkeypatch):
    monkeypatch.setattr(router, "CACHE_SIZE", 3)
    stage = EvidentialLikelihood(SHIPPED)
    for score in (0.1, 0.2, 0.3, 0.4):
        stage.fast(action({"contact": 1}), evidence(score))
    assert len(stage._cache) == 3
    calls = counting(monkeypatch)
    stage.fast(action({"contact": 1}), evidence(0.4))
    assert calls == []
    stage.fast(action({"contact": 1}), evidence(0.1))
    assert calls == [1]


def test_a_failing_model_output_is_not_kept():
    stage = EvidentialLikelihood(SHIPPED)
    saved = stage.loaded.model.w["head.3.bias"].copy()
    stage.loaded.model.w["head.3.bias"][:] = float("nan")
    assert stage.estimate(action({"contact": 1}), evidence()).path == "fallback"
    assert not stage._cache
    stage.loaded.model.w["head.3.bias"][:] = saved
    assert stage.estimate(action({"contact": 1}), evidence()).path == "fast"
