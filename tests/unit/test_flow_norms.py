"""Norms of the flow (guardian_proxy/flow_norms.py, factor_tables/norms.yaml): which flows are the service's own
function, started by the user, and what the gateway then decides — the unit rules on Actions, and the issue's own
commands through the real Gateway."""

import json

import pytest

from guardian_proxy.config import load_factor_tables
from guardian_proxy.flow_norms import FlowNorms
from guardian_proxy.types import Action, RawRequest

NORMS = FlowNorms(load_factor_tables())


def act(**kw):
    base = dict(domain="shop.example", host="www.shop.example", categories={"credentials": 1, "contact": 1},
                recipient="first_party", purposes=["authentication"], basis="user", site="shop.example")
    base.update(kw)
    return Action(**base)


def name(a):
    m = NORMS.match(a)
    return m.name if m else None


def test_the_users_own_flows_follow_a_norm():
    assert name(act()) == "own_sign_in"
    assert name(act(purposes=["payment"], categories={"financial": 2})) == "own_checkout"
    assert name(act(purposes=["functionality"], categories={"health": 1, "identity": 1})) == "own_function"
    assert name(act(recipient="service_provider", role="payment_processor", purposes=["payment"],
                    categories={"financial": 2, "contact": 1}, basis="default")) == "payment_processor"
    assert name(act(recipient="service_provider", role="identity_provider", basis="default")) == "identity_provider"
    assert name(act(recipient="service_provider", role="platform", purposes=["unknown"], basis="default")) == \
        "site_platform"
    assert name(act(recipient="service_provider", purposes=["functionality"], categories={"precise_location": 1},
                    basis="default")) == "embedded_service"


def test_what_no_norm_covers():
    for rec in ("analytics", "ad_network", "data_broker", "social", "ai_service"):
        assert name(act(recipient=rec)) is None, rec  # a tracker or AI service never follows a norm
    assert name(act(basis="background")) is None  # a beacon is not the user's request
    assert name(act(purposes=["analytics"])) is None  # an endpoint that only measures
    assert name(act(flags=["cname_cloaked"])) is None  # a tracker behind the site's own name
    assert name(act(recipient="unknown_third_party")) is None
    # an identity provider's norm covers what a sign-in needs, not a diagnosis
    assert name(act(recipient="service_provider", role="identity_provider", categories={"health": 1})) is None
    # a service a page embeds: not for a script without a page, not for an undeclared purpose
    assert name(act(recipient="service_provider", purposes=["functionality"], site=None)) is None
    assert name(act(recipient="service_provider", purposes=["unknown"])) is None


def test_norm_table_is_validated():
    from guardian_proxy.config import Norm

    with pytest.raises(ValueError, match="valid"):
        Norm(L=0.1, says="x", source="y", recipients=["adnetwork"])
    with pytest.raises(ValueError):
        Norm(L=1.5, says="x", source="y", recipients=["first_party"])


# ----------------------------------------------------------------------------- the commands, real Gateway

GITHUB = RawRequest(method="POST", url="https://github.com/session", headers=[
    ("Origin", "https://github.com"), ("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "navigate"),
    ("Sec-Fetch-User", "?1"), ("Content-Type", "application/x-www-form-urlencoded")],
    body=b"login=jane.doorwright%40examplemail.com&password=Tr0ub4dor%263-horse")
STRIPE = RawRequest(method="POST", url="https://checkout.stripe.com/api/payment_pages/cs_live_a1b2/confirm", headers=[
    ("Origin", "https://checkout.stripe.com"), ("Referer", "https://www.shop.example/cart"),
    ("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "cors"), ("Content-Type", "application/x-www-form-urlencoded")],
    body=b"card[number]=4242424242424242&card[cvc]=123&card[exp_month]=12&card[exp_year]=30"
         b"&billing_details[email]=jane%40examplemail.com")


@pytest.mark.slow
def test_github_login_and_stripe_payment_are_allowed(gateway):
    d = gateway.evaluate(GITHUB, log=False)
    assert d.action == "allow" and d.rewrite is None, d.explanation
    assert d.extra["norm"] == "own_sign_in" and d.likelihood.path == "norm"
    assert "the user's own sign-in" in d.explanation
    d = gateway.evaluate(STRIPE, log=False)
    assert d.action == "allow", d.explanation
    assert d.six.role == "payment_processor" and d.extra["norm"] == "payment_processor"


@pytest.mark.slow
def test_a_learned_policy_does_not_make_the_site_stricter_with_itself(tmp_path):
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    gw = Gateway.from_settings(load_settings(state_dir=tmp_path), with_log=False)
    req = RawRequest(method="POST", url="https://www.shop.example/login", headers=[
        ("origin", "https://www.shop.example"), ("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "navigate"),
        ("sec-fetch-user", "?1"), ("content-type", "application/x-www-form-urlencoded")],
        body=b"email=jane%40examplemail.com&password=Tr0ub4dor%263-horse")
    assert gw.learn_policy("https://www.shop.example/privacy", "text/markdown",
                           "# Privacy policy\n\nWe collect your e-mail address to send you our newsletter. "
                           "We share your data with our partners for advertising.\n") is not None
    d = gw.evaluate(req, log=False)
    assert d.evidence.statements, "the learned policy is the evidence"
    assert d.action == "allow" and d.extra["norm"] == "own_sign_in", d.explanation


@pytest.mark.slow
def test_same_identifier_same_verdict_whatever_carries_it(gateway):
    """An e-mail to an analytics service: base64 JSON in a form, JSON URL-encoded inside JSON, base64 text, a
    header, JSON Measurement Protocol, the gtag query, a beacon body — never as it is."""
    email = "jane.doorwright@examplemail.com"
    page = [("origin", "https://www.shop.example"), ("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "no-cors")]
    import base64
    from urllib.parse import quote

    b64json = base64.b64encode(json.dumps({"event": "login", "properties": {"email": email}}).encode()).decode()
    b64text = base64.b64encode(f"uid={email}".encode()).decode()
    reqs = [
        RawRequest(method="POST", url="https://api-js.mixpanel.com/track/", headers=page + [
            ("content-type", "application/x-www-form-urlencoded")], body=f"data={quote(b64json)}".encode()),
        RawRequest(method="POST", url="https://api.segment.io/v1/t", headers=page + [("content-type", "text/plain")],
                   body=json.dumps({"ctx": quote(json.dumps({"contact": email}))}).encode()),
        RawRequest(method="POST", url="https://api.segment.io/v1/t", headers=page + [("content-type", "application/json")],
                   body=json.dumps({"pd": b64text}).encode()),
        RawRequest(method="GET", url="https://region1.google-analytics.com/g/collect?v=2&tid=G-X&en=login",
                   headers=page + [("x-user-email", email)]),
        RawRequest(method="POST", url="https://www.google-analytics.com/mp/collect?measurement_id=G-X&api_secret=s",
                   headers=[("content-type", "application/json")],
                   body=json.dumps({"client_id": "1.2", "user_id": email, "events": [{"name": "login"}]}).encode()),
        RawRequest(method="POST", url=f"https://region1.google-analytics.com/g/collect?v=2&tid=G-X&cid=1.2&uid={email}"
                                      "&en=login", headers=page),
        RawRequest(method="POST", url="https://region1.google-analytics.com/g/collect?v=2&tid=G-X",
                   headers=page + [("content-type", "text/plain")], body=f"en=login&uid={email}".encode()),
    ]
    for r in reqs:
        d = gateway.evaluate(r, log=False)
        assert d.action in ("transform", "deny"), (r.url, d.explanation)
        if d.action == "transform":
            sent = (d.rewrite.url or r.url) + (d.rewrite.body or r.body).decode() + str(d.rewrite.set_headers)
            assert email not in sent and quote(email) not in sent, r.url
            assert b64json not in sent and b64text not in sent


def test_a_script_signed_in_to_the_users_own_account_follows_a_norm():
    from guardian_proxy.extract.extractor import signed_in

    def req(*headers):
        return RawRequest(method="POST", url="https://api.bank.example/api/transactions", headers=list(headers))

    assert signed_in(req(("Authorization", "Bearer 94985fec-a754-4caf-805f-d6f59be371f6")))
    assert signed_in(req(("X-Figma-Token", "figd_0yC9QWdUpkoJSL2bfnYmwxJc3oOm")))
    assert not signed_in(req(("Authorization", "Basic WmxaaWJQVkRaMmZxRllDa1A0RzQzdTpwUkJh")))  # an SDK's app key
    assert not signed_in(req(("Authorization", "Bearer pk_live_51HqLy2GvQx3s8abcdef")))  # publishable
    assert not signed_in(req(("Authorization", "Bearer short")))
    script = act(recipient="unknown_third_party", purposes=["payment"], basis="default", site=None,
                 categories={"financial": 1}, flags=["signed_in"])
    assert name(script) == "own_account"
    assert name(script.model_copy(update={"site": "shop.example"})) is None  # from a page: as often an SDK's key
    assert name(script.model_copy(update={"flags": []})) is None


def test_a_function_named_beside_a_measurement_word_is_the_function():
    assert name(act(purposes=["payment", "analytics"], categories={"financial": 1})) == "own_checkout"
    assert name(act(purposes=["analytics"], categories={"contact": 1})) is None


ELEMENT = [("origin", "https://app.element.io"), ("referer", "https://app.element.io/"),
           ("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty"),
           ("content-type", "application/json"),
           ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36")]
HOMESERVER = "https://matrix-client.matrix.org/_matrix/client/v3"


def test_a_message_to_the_users_own_homeserver_from_a_web_client_goes_as_written(gateway):
    """Element on app.element.io sends the user's message to the user's Matrix homeserver with the access token the
    homeserver issued at login: an open account protocol, so the message goes unchanged (norm
    `account_protocol`); without a token, or on a tracker's host, no norm covers it."""
    body = json.dumps({"msgtype": "m.text", "body": "New address from Monday: 27 Quillfeather Lane, N1 7ZX. Call me on "
                                                    "+44 20 7946 0321 if the buzzer fails."}).encode()
    url = HOMESERVER + "/rooms/!hXqLrTbWvYzAbCdEf%3Amatrix.org/send/m.room.message/m1718190131234.7"
    token = ("authorization", "Bearer syt_amFuZQ_k39XvyHMen41W4z1oXDf_1a2b3c")
    d = gateway.evaluate(RawRequest(method="PUT", url=url, headers=ELEMENT + [token], body=body), log=False)
    assert d.action == "allow" and d.extra.get("norm") == "account_protocol", d.explanation
    d = gateway.evaluate(RawRequest(method="PUT", url=url, headers=ELEMENT, body=body), log=False)
    assert d.extra.get("norm") is None
    login = json.dumps({"type": "m.login.password", "identifier": {"type": "m.id.user", "user": "jane"},
                        "password": "correct horse battery staple"}).encode()
    d = gateway.evaluate(RawRequest(method="POST", url=HOMESERVER + "/login", headers=ELEMENT, body=login), log=False)
    assert d.action == "allow" and d.extra.get("norm") == "account_protocol_sign_in", d.explanation
    tracker = url.replace("matrix-client.matrix.org", "www.google-analytics.com")
    d = gateway.evaluate(RawRequest(method="PUT", url=tracker, headers=ELEMENT + [token], body=body), log=False)
    assert d.action != "allow"
