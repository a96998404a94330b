"""guardian_proxy/failure.py without a proxy: a fail rule's decision (R-FAIL-UNKNOWN-TIER) keeps what is known of
the request, the program that sent it included, so its block answer names it (R-BLOCK-ANSWER)."""

from __future__ import annotations

from guardian_proxy.config import load_factor_tables
from guardian_proxy.dashboard.wording import of_decision
from guardian_proxy.failure import FailureRules
from guardian_proxy.types import RawRequest

AGENT = {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}


def test_a_fail_closed_decision_before_extraction_names_the_program():
    req = RawRequest(method="POST", url="http://broker.example/collect", body=b'{"note": "x"}',
                     headers=[("content-type", "application/json")], app=AGENT)
    d = FailureRules(load_factor_tables()).raised(req, TimeoutError())
    assert d.action == "deny" and d.rule == "deadline-error-fail-closed"
    assert d.six.app == AGENT and d.six.host == "broker.example"
    words, _ = of_decision(d)
    assert "sent by python3 agent.py" in words and "an app or tool" not in words


def test_an_unknown_program_is_not_named():
    req = RawRequest(method="POST", url="http://broker.example/collect", body=b"{}",
                     app={"name": "unknown", "why": "no permission"})
    d = FailureRules(load_factor_tables()).decision(req, "extract", ValueError("x"))
    words, _ = of_decision(d)
    assert "no permission" not in words and "sent by an app or tool (no web page)" in words
