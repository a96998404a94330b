"""The registry and CPE(t) = Σ w(v)·(1 + α·deg(v)) over the co-occurrence graph of entity types."""

import pytest

from guardian_proxy.session.registry import SessionState, normalise

W = {"PERSON": 0.5, "LOCATION": 0.3, "AMOUNT": 0.8, "US_SSN": 1.0}


def test_normalise():
    assert normalise("  John   DOE's ") == "john doe"
    assert normalise("(Austin,") == "austin"


def test_cpe_formula_and_graph():
    s = SessionState(sid="x")
    s.add("PERSON", "John Doe", 1)
    assert s.score(W, 0.5) == pytest.approx(0.5)
    s.add("LOCATION", "Austin", 2)
    assert s.degree("PERSON") == 1
    assert s.score(W, 0.5) == pytest.approx((0.5 + 0.3) * 1.5)
    s.add("AMOUNT", "$85,000", 3)
    s.add("PERSON", "Ann Lee", 3)  # a second value of a seen type adds no node
    assert s.score(W, 0.5) == pytest.approx((0.5 + 0.3 + 0.8) * 2.0)
    assert s.score(W, 0.5, upto=2) == pytest.approx(1.2) and s.score(W, 0.0) == pytest.approx(1.6)
    assert s.score(W, 1.0) == pytest.approx(1.6 * 3)  # superlinear in the number of linked types


def test_same_value_one_entity_first_turn_kept_and_blocked_values_not_kept():
    s = SessionState(sid="x")
    e = s.add("PERSON", "John Doe", 3)
    assert s.add("ORGANIZATION", "JOHN DOE's", 1) is e and e.first_turn == 1 and e.entity == "PERSON"
    b = s.add("US_SSN", "536-22-8714", 2, blocked=True, key=lambda n: "#" + str(len(n)))
    assert b.blocked and b.original == "" and "536-22-8714" not in str(s.meta()) and b.norm == "#11"
    assert s.add("GOVERNMENT_ID", "536-22-8714", 4, key=lambda n: "#" + str(len(n))) is b  # stays blocked


def test_meta_round_trip():
    s = SessionState(sid="x", turn=4, crossed_turn=2)
    s.add("PERSON", "John Doe", 1)
    s.add("AMOUNT", "$5", 2)
    s.names["john"] = "Alex"
    r = SessionState.from_meta("x", 1.0, 2.0, s.meta(), [e.to_dict() for e in s.entities.values()])
    assert r.meta() == s.meta() and r.entities.keys() == s.entities.keys()
