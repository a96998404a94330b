import json

import pytest

from guardian_proxy.types import RawRequest

pytestmark = pytest.mark.slow  # loads Presidio + spaCy


def post(url, body, ctype="application/json", **headers):
    h = [("content-type", ctype)] + list(headers.items())
    return RawRequest(method="POST", url=url, headers=h, body=body if isinstance(body, bytes) else body.encode())


def test_plain_get_is_allowed_without_scoring(gateway):
    d = gateway.evaluate(RawRequest(method="GET", url="https://example.org/index.html"), log=False)
    assert d.action == "allow" and d.risk is None and d.rule == "no-personal-data"


def test_card_to_ad_network_is_denied(gateway):
    d = gateway.evaluate(post("https://ads.doubleclick.net/collect", '{"pan": "4111 1111 1111 1111"}'), log=False)
    assert d.action == "deny"
    assert d.six.categories.get("financial") == 1 and d.six.recipient == "ad_network"
    assert "deny floor" in d.explanation


def test_name_and_email_to_service_provider_is_rewritten_as_valid_json(gateway):
    body = json.dumps({"ticket": {"text": "Please call John Smith back at john.smith@example.com today"}})
    d = gateway.evaluate(post("https://support.zendesk.com/api/tickets", body, **{"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"}),
                         log=False)  # a phone app's SDK: from curl or a script it is the user's own addressee
    assert d.action == "transform" and d.start_level is not None
    out = json.loads(d.rewrite.body)
    text = out["ticket"]["text"]
    assert "john.smith@example.com" not in text and "John Smith" not in text
    assert text.startswith("Please call ") and text.endswith(" today")


def test_context_and_fixed_likelihood(gateway):
    body = '{"note": "John Smith, john.smith@example.com"}'
    mild = gateway.evaluate(post("https://a.example/x", body), context="mild", likelihood=0.7, log=False)
    severe = gateway.evaluate(post("https://a.example/x", body), context="severe", likelihood=0.7, log=False)
    assert mild.action == "allow" and severe.action == "deny"
    assert mild.likelihood.path == "fixed" and mild.risk.R < severe.risk.R


def test_unparsed_rule(gateway):
    bad = post("https://ads.doubleclick.net/collect", b"{truncated")
    assert gateway.evaluate(bad, log=False).rule == "unparsed-high-risk"
    ok = gateway.evaluate(post("https://cdn.example.org/x", b"{truncated"), log=False)
    assert ok.action == "allow" and ok.rule == "unparsed-pass" and ok.six.categories == {"unparsed": 1}


def test_log_line_has_no_raw_values(gateway):
    body = '{"email": "zq.canary.1@example.com", "name": "Quentin Zarkowsky"}'
    d = gateway.evaluate(post("https://support.zendesk.com/api/x?email=zq.canary.1%40example.com", body))
    text = gateway.settings.decision_log.read_text()
    last = json.loads(text.splitlines()[-1])
    assert last["id"] == d.id and last["action"] == d.action
    for key in ("ts", "method", "scheme", "host", "path", "recipient", "categories", "purposes", "basis", "evidence",
                "L", "l_path", "u", "Sd", "Seff", "MT", "R", "tier", "start_level", "final_level", "rounds",
                "latency_ms"):
        assert key in last
    assert "canary" not in text and "Zarkowsky" not in text


def test_resign_gives_a_new_decision_and_leaves_the_given_one(monkeypatch):
    from guardian_proxy import sigv4
    from guardian_proxy.pipeline import resign
    from guardian_proxy.types import Action, Decision, Rewrite

    req = post("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse", b'{"a":1}',
               authorization="AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261202/us-east-1/bedrock/aws4_request")
    given = Decision(action="transform", six=Action(domain="amazonaws.com", host=req.host), explanation="why",
                     rewrite=Rewrite(body=b'{"a":2}', set_headers={"x-keep": "1"}))
    monkeypatch.setattr(sigv4, "resign", lambda *a: {"authorization": "AWS4-HMAC-SHA256 new", "x-amz-date": "d"})
    signed = resign(req, given)
    assert signed.rewrite.set_headers == {"x-keep": "1", "authorization": "AWS4-HMAC-SHA256 new", "x-amz-date": "d"}
    assert given.rewrite.set_headers == {"x-keep": "1"} and signed.id == given.id

    def cannot(*a):
        raise sigv4.CannotResign("no credentials")

    monkeypatch.setattr(sigv4, "resign", cannot)
    blocked = resign(req, given)
    assert blocked.action == "deny" and blocked.rewrite is None and blocked.rule == "signed-request"
    assert blocked.explanation.startswith("why; blocked: the request is signed") and "no credentials" in blocked.explanation
    assert given.action == "transform" and given.rewrite.body == b'{"a":2}' and given.rule is None
