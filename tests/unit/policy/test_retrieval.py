"""guardian_proxy.policy.retrieval: hybrid field overlap + BM25Plus, top 8."""

import time

import numpy as np

from guardian_proxy.policy.retrieval import ALPHA, PolicyIndex, Query, query_from_action, tokenize
from guardian_proxy.types import Action, Statement


def st(i, text, practice="collect", cats=(), recs=(), purps=(), negated=False):
    return Statement(id=f"x.com:{i:04d}", domain="x.com", text=text, practice=practice, data_categories=list(cats),
                     recipients=list(recs), purposes=list(purps), negated=negated)


STATEMENTS = [
    st(0, "We collect your email address when you sign up.", "collect", ["contact"], ["first_party"], ["authentication"]),
    st(1, "We share device identifiers with advertising partners to show ads.", "share", ["device_id"], ["ad_network"],
       ["advertising"]),
    st(2, "We use cookies to measure how our site is used.", "use", ["cookie"], ["first_party"], ["analytics"]),
    st(3, "We may share information with third parties.", "share", ["other"], ["unknown_third_party"]),
    st(4, "We protect your data with encryption.", "protect", ["other"]),
    st(5, "We share your email address with advertisers for marketing.", "share", ["contact"], ["ad_network"],
       ["advertising"]),
]


def test_hybrid_ranks_the_matching_disclosure_first():
    idx = PolicyIndex(STATEMENTS)
    q = Query.of(["contact"], ["ad_network"], ["advertising"], ["share"])
    top = idx.top(q)
    assert [i for i, _ in top][:2] == [5, 1]
    assert all(0 < s <= 1 for _, s in top) and [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    assert len(idx.top(q, k=3)) == 3


def test_alpha_extremes_are_fields_only_and_bm25_only():
    idx = PolicyIndex(STATEMENTS)
    q = Query.of(["cookie"], ["first_party"], ["analytics"], ["collect", "use"])
    f, b = idx.field_scores(q), idx.bm25_scores(q)
    assert np.allclose(idx.scores(q, 1.0), f) and np.allclose(idx.scores(q, 0.0), b)
    assert np.allclose(idx.scores(q), ALPHA * f + (1 - ALPHA) * b)
    assert f.argmax() == 2 and b.argmax() == 2 and 0 <= b.min() and b.max() == 1.0


def test_generic_statements_get_partial_credit():
    idx = PolicyIndex(STATEMENTS)
    f = idx.field_scores(Query.of(["financial"], ["data_broker"], [], []))
    assert f[3] > 0 and f[3] < 0.5  # "personal information" to "third parties": generic only
    assert f[2] == 0


def test_query_from_action():
    a = Action(domain="doubleclick.net", host="ad.doubleclick.net", categories={"contact": 2, "cookie": 0},
               recipient="ad_network", purposes=["advertising", "unknown"])
    q = query_from_action(a)
    assert q.categories == ("contact",) and q.recipients == ("ad_network",) and q.purposes == ("advertising",)
    assert "share" in q.practices and "email" in q.terms and "advertis" in q.terms, q.terms
    fp = query_from_action(Action(domain="x.com", host="x.com", categories={"identity": 1}, recipient="first_party"))
    assert fp.practices == ("collect", "use") and fp.purposes == ()


def test_tokenize_stems_and_drops_stopwords():
    assert tokenize("We are sharing the cookies") == ["shar", "cooki"]
    assert tokenize("share shares shared Sharing") == ["shar"] * 4
    assert tokenize("party parties processes process addresses") == ["parti", "parti", "process", "process", "address"]


def test_empty_index():
    idx = PolicyIndex([])
    assert idx.top(Query.of(["contact"])) == []


def test_500_statements_p50_under_2ms():
    rng = np.random.default_rng(0)
    words = "collect share email address device identifier cookies advertising partners analytics location".split()
    cats, recs, purps = ["contact", "device_id", "cookie", "precise_location"], ["ad_network", "analytics",
                                                                                  "first_party"], ["advertising", "analytics"]
    sts = [st(i, " ".join(rng.choice(words, 18)), "share" if i % 2 else "collect", [cats[i % 4]], [recs[i % 3]],
              [purps[i % 2]]) for i in range(500)]
    idx = PolicyIndex(sts)
    queries = [Query.of([c], [r], [p], ["share"]) for c in cats for r in recs for p in purps]
    times = []
    for q in queries * 5:
        t = time.perf_counter()
        idx.top(q)
        times.append(time.perf_counter() - t)
    assert np.median(times) < 0.002, f"p50 {np.median(times) * 1000:.2f} ms"
