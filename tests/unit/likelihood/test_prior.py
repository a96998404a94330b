"""No policy known: L is a context prior, not the model's 'undisclosed' value (a login must keep working)."""

import pytest

from guardian_proxy.likelihood import prior
from guardian_proxy.types import Action, Evidence, RawRequest, ScoredStatement, Statement


def act(recipient, basis):
    return Action(domain="x.example", host="x.example", recipient=recipient, basis=basis, categories={"contact": 1})


def test_prior_orders_contexts_and_says_so():
    user = prior.prior(act("first_party", "user"))
    tracker = prior.prior(act("ad_network", "background"))
    assert user.value < prior.prior(act("first_party", "background")).value < tracker.value
    assert user.path == "fallback" and "no policy known" in user.reason


def test_prior_only_without_evidence():
    assert prior.applies(Evidence(transparency="none"))
    s = ScoredStatement(statement=Statement(id="s", domain="x", text="We collect e-mail."), score=1.0)
    assert not prior.applies(Evidence(statements=[s], transparency="partial"))


@pytest.mark.slow
def test_first_party_login_passes_and_unknown_tracker_does_not(gateway):
    login = RawRequest(method="POST", url="https://shop.example.org/login", body=b"email=jane.doe%40gmail.com&password=hunter2secret",
                       headers=[("content-type", "application/x-www-form-urlencoded"), ("origin", "https://shop.example.org"),
                                ("sec-fetch-mode", "navigate"), ("sec-fetch-user", "?1")])
    d = gateway.evaluate(login, log=False)
    assert d.action == "allow" and d.likelihood.path == "norm"  # the norm of the flow sets L before any prior
    pixel = RawRequest(method="POST", url="https://px.unknown-adtech.example/p", body=b'{"email": "jane.doe@gmail.com"}',
                       headers=[("content-type", "application/json"), ("origin", "https://shop.example.org"),
                                ("sec-fetch-mode", "no-cors")])
    d = gateway.evaluate(pixel, log=False)
    assert d.action != "allow" and d.likelihood.path == "fallback"  # no policy known: the context prior
