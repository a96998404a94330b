"""A decision on the worker pipe (guardian_proxy/workers.py `to_wire` / `from_wire`): a deny's policy evidence crosses
as plain fields, not as pickled models, and the proxy process gets the same decision back."""

from __future__ import annotations

import pickle

from guardian_proxy.types import Action, Decision, Evidence, ScoredStatement, Statement
from guardian_proxy.workers import from_wire, to_wire


def _deny(n: int = 8) -> Decision:
    statements = [ScoredStatement(score=0.5 + i / 100, statement=Statement(
        id=f"ads.example:{i:04d}", domain="ads.example", text=f"We may share your activity with partners ({i}). " * 4,
        practice="share", data_categories=["behavioural"], recipients=["ad_network"], purposes=["advertising"],
        start=i * 100, end=i * 100 + 90, section="sharing", source="Privacy Policy")) for i in range(n)]
    return Decision(action="deny", six=Action(domain="ads.example", host="ads.example", categories={"financial": 1}),
                    evidence=Evidence(statements=statements, transparency="explicit", policy_source="builtin"),
                    explanation="a card number to an ad network")


def test_a_decision_crosses_the_pipe_whole_and_the_worker_keeps_its_own():
    d = _deny()
    slim, statements = to_wire(d)
    got = from_wire(*pickle.loads(pickle.dumps((slim, statements), pickle.HIGHEST_PROTOCOL)))
    assert got == d and got.model_dump() == d.model_dump()
    assert [s.statement.id for s in got.evidence.statements] == [f"ads.example:{i:04d}" for i in range(8)]
    assert len(d.evidence.statements) == 8  # the worker's decision is not emptied by sending it


def test_statements_cross_as_fields_not_as_models():
    d = _deny()
    wire = pickle.dumps(to_wire(d), pickle.HIGHEST_PROTOCOL)
    assert b"ScoredStatement" not in wire and b"ads.example:0007" in wire
    assert len(wire) < len(pickle.dumps(d, pickle.HIGHEST_PROTOCOL))


def test_a_decision_without_statements_crosses_as_it_is():
    d = Decision(action="allow", six=Action(domain="example.org", host="www.example.org"))
    assert to_wire(d) == (d, ())
    assert from_wire(d, ()) is d
