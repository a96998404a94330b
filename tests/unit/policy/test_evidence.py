"""guardian_proxy.policy.evidence: the stage (retrieve) and its ingestion entry points (add, learn)."""

import json
import time

import pytest

from guardian_proxy.policy import EvidenceStage
from guardian_proxy.resources import policies_dir
from guardian_proxy.types import TRANSPARENCY, Action

POLICY_HTML = """<html><head><title>Privacy Policy - Shop</title><script>track()</script></head><body>
<nav>Home | Cart</nav><h1>Privacy Policy</h1>
<p>We collect your name, email address and postal address when you place an order.</p>
<p>We share your email address with advertising partners for marketing.</p>
<p>We use cookies and similar technologies to measure traffic.</p>
<p>We retain order records for 7 years to comply with legal obligations.</p></body></html>"""


@pytest.fixture
def stage(tmp_path):
    return EvidenceStage.from_dirs(policies_dir(), tmp_path / "policies")


def _action(domain, cats, recipient, purposes=("unknown",)):
    return Action(domain=domain, host=f"www.{domain}", categories=dict.fromkeys(cats, 1), recipient=recipient,
                  purposes=list(purposes))


def test_retrieve_from_the_shipped_corpus(stage):
    ev = stage.retrieve(_action("doubleclick.net", ["contact", "cookie"], "ad_network", ["advertising"]))
    assert ev.policy_source == "shipped:google.com" and ev.transparency in TRANSPARENCY[:3]
    assert 1 <= len(ev.statements) <= 8
    scores = [s.score for s in ev.statements]
    assert scores == sorted(scores, reverse=True) and all(0 < x <= 1 for x in scores)
    assert all(s.statement.domain == "google.com" for s in ev.statements)
    top = ev.statements[0].statement
    assert {"contact", "cookie"} & set(top.data_categories) or "ad_network" in top.recipients


def test_unknown_domain_has_no_evidence(stage):
    ev = stage.retrieve(_action("no-policy.example", ["contact"], "unknown_third_party"))
    assert ev.statements == [] and ev.transparency == "none" and ev.policy_source is None


def test_owner_is_used_when_the_domain_is_unknown(stage):
    a = _action("tracker-cname.example", ["device_id"], "ad_network")
    a.owner = "criteo.com"
    assert stage.retrieve(a).policy_source == "shipped:criteo.com"


def test_added_policy_answers_with_full_disclosure(stage):
    r = stage.add("shopexample.com", POLICY_HTML.encode(), origin="policy.html")
    assert r.stored and r.statements == 4 and r.format == "html" and r.title == "Privacy Policy - Shop"
    ev = stage.retrieve(_action("shopexample.com", ["contact"], "ad_network", ["advertising"]))
    assert ev.policy_source == "user:shopexample.com" and ev.transparency == "full"
    assert "advertising partners" in ev.statements[0].statement.text
    ev = stage.retrieve(_action("shopexample.com", ["health"], "data_broker", ["profiling"]))
    assert ev.transparency == "vague"


def test_learn_a_policy_page_and_log_it(stage, tmp_path):
    assert stage.wants("https://www.shopexample.com/privacy-policy?ref=footer")
    r = stage.learn("https://www.shopexample.com/privacy-policy?ref=footer", "text/html", POLICY_HTML)
    assert r.stored and r.domain == "shopexample.com"
    assert not stage.wants("https://www.shopexample.com/privacy-policy")  # learned once per run
    assert stage.learn("https://www.shopexample.com/privacy-policy", "text/html", POLICY_HTML) is None
    log = [json.loads(x) for x in (tmp_path / "policies" / "learned.jsonl").read_text().splitlines()]
    assert log[0]["domain"] == "shopexample.com" and log[0]["statements"] == 4 and log[0]["stored"]
    assert log[0]["page"] == "https://www.shopexample.com/privacy-policy"  # no query string
    assert "email" not in json.dumps(log)  # no page text
    assert stage.store.find("shopexample.com").documents[0]["kind"] == "learned"


def test_learning_skips_non_policies_and_hand_added_domains(stage):
    assert stage.learn("https://shopexample.com/products/1", "text/html", POLICY_HTML) is None
    r = stage.learn("https://shopexample.com/legal/terms", "text/html", "<title>Terms of Service</title><p>Be nice.</p>")
    assert r is not None and "not_policy" in r.flags and not r.stored
    stage.add("mine-example.com", POLICY_HTML, origin="mine.html")
    assert stage.learn("https://mine-example.com/privacy", "text/html", POLICY_HTML) is None


@pytest.mark.parametrize("content, flag", [
    ("", "empty"),
    ("<html><body><script>var a = 1;</script></body></html>", "empty"),
    ("Nous partageons vos données personnelles avec nos partenaires publicitaires pour la publicité. " * 20,
     "non_english"),
    ("<p>" + "Lorem ipsum dolor sit amet. " * 100 + "</p>", "non_english"),
    ("<p>" + "This privacy page is about our town: the sky is blue and the grass is green. " * 50 + "</p>",
     "no_statements"),
    ("<p>" + "The sky is blue and the grass is green in this town. " * 50 + "</p>", "not_policy"),
])
def test_bad_input_is_reported_not_stored(stage, content, flag):
    r = stage.learn("https://bad-example.com/privacy", "text/html", content)
    assert not r.stored and flag in r.flags and stage.store.find("bad-example.com") is None
    assert "not stored" in r.message


def test_enormous_page_is_cut_and_still_learned(stage, monkeypatch):
    from guardian_proxy.policy import evidence

    monkeypatch.setattr(evidence, "MAX_LEARN_CHARS", 50_000)
    page = "<h1>Privacy Policy</h1>" + "<p>We collect your email address to send you receipts.</p>" * 20_000
    t = time.perf_counter()
    r = stage.learn("https://big-example.com/privacy", "text/html", page)
    assert r.stored and "truncated" in r.flags and time.perf_counter() - t < 30
