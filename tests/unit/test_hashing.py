"""Signed hashed features: the same grams give the same buckets, signs and unit norm; none gives nothing."""

import numpy as np

from guardian_proxy.hashing import signed_buckets


def test_buckets_are_stable_signed_and_normalised():
    ids, w = signed_buckets(["who", "were", "who"], 8)
    ids2, w2 = signed_buckets(["were", "who"], 8)
    assert ids.tolist() == ids2.tolist() and np.allclose(w, w2)  # distinct grams, in no order
    assert len(ids) == 2 and all(0 <= i < 256 for i in ids.tolist())
    assert np.isclose(float(np.dot(w, w)), 1.0) and set(np.abs(w * np.sqrt(2)).round(4).tolist()) == {1.0}
    idf = np.full(256, 2.0, dtype=np.float32)
    assert np.allclose(signed_buckets(["who", "were"], 8, idf)[1], w)  # a uniform idf changes nothing once normalised
    ids, w = signed_buckets([], 8)
    assert ids.size == 0 and w.size == 0
