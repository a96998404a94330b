"""guardian_proxy.policy.store: the shipped corpus and the user store."""

import json

import pytest

from guardian_proxy.policy.store import PolicyStore
from guardian_proxy.resources import policies_dir
from guardian_proxy.state.policies import read_statements
from guardian_proxy.types import CATEGORIES, CONDITIONS, PRACTICES, PURPOSES, RECIPIENT_CLASSES, Statement

SHIPPED = policies_dir()


def test_shipped_corpus_is_small_attributed_and_valid():
    files = [p for p in SHIPPED.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 5_000_000
    assert max(p.stat().st_size for p in files) < 1_000_000
    notice = (SHIPPED / "NOTICE.md").read_text()
    assert "Open Terms Archive" in notice and "ODC" in notice and "CC BY 4.0" in notice
    index = json.loads((SHIPPED / "index.json").read_text())
    assert index["format"] == 1 and len(index["policies"]) >= 60
    store = PolicyStore(SHIPPED)
    for p in store.shipped.values():
        sts = p.statements
        assert len(sts) == p.count > 0 and p.documents
        for s in sts:
            assert s.domain == p.domain and s.practice in PRACTICES and s.text
            assert set(s.data_categories) <= set(CATEGORIES) and set(s.recipients) <= set(RECIPIENT_CLASSES)
            assert set(s.purposes) <= set(PURPOSES) - {"unknown"} and s.condition in (None, *CONDITIONS)


@pytest.mark.parametrize("domain, owner", [
    ("doubleclick.net", "google.com"), ("google-analytics.com", "google.com"), ("facebook.net", "facebook.com"),
    ("twimg.com", "x.com"), ("cloudfront.net", "amazonaws.com"), ("criteo.net", "criteo.com"),
    ("licdn.com", "linkedin.com"), ("tiktokcdn.com", "tiktok.com"), ("huggingface.co", "huggingface.co"),
    ("cloudflareinsights.com", "cloudflare.com"), ("wikimedia.org", "wikipedia.org"), ("adsrvr.org", "thetradedesk.com"),
])
def test_domains_resolve_to_their_owner(domain, owner):
    assert PolicyStore(SHIPPED).find(domain).domain == owner


def test_corpus_covers_the_common_destinations():
    store = PolicyStore(SHIPPED)
    kinds = {}
    for p in store.shipped.values():
        kinds[p.kind] = kinds.get(p.kind, 0) + 1
    assert kinds["ad_network"] >= 10 and kinds["social"] >= 10 and kinds["service_provider"] >= 5
    assert kinds["ai_service"] >= 2 and kinds["first_party"] >= 30
    assert len(store.alias) >= 300
    assert store.find("unknown-site.example") is None


def _st(text, practice="collect"):
    return Statement(id="tmp", domain="tmp", text=text, practice=practice, data_categories=["contact"])


def test_user_store_add_replace_and_precedence(tmp_path):
    store = PolicyStore(SHIPPED, tmp_path / "policies")
    p = store.add("google.com", [_st("We collect your email address.")], {"title": "Mine", "origin": "/a.md"})
    assert p.source == "user" and p.count == 1 and p.statements[0].id == "google.com:0000"
    assert store.find("doubleclick.net").source == "user"  # the owner's user policy wins for its domains
    store.add("google.com", [_st("We share it.", "share"), _st("Twice.")], {"title": "Other", "origin": "/b.md"})
    store.add("google.com", [_st("We collect your phone number.")], {"title": "Mine", "origin": "/a.md"})
    p = store.find("google.com")
    assert [s.text for s in p.statements] == ["We share it.", "Twice.", "We collect your phone number."]
    assert [s.id for s in p.statements] == ["google.com:0000", "google.com:0001", "google.com:0002"]
    assert [d["title"] for d in p.documents] == ["Other", "Mine"]
    # on disk, in the documented format; another process (a new store) sees it
    again = PolicyStore(SHIPPED, tmp_path / "policies")
    assert again.find("google.com").count == 3
    assert read_statements(tmp_path / "policies" / "statements" / "google.com.jsonl")[2].text.endswith("number.")
    lines = (tmp_path / "policies" / "statements" / "google.com.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["practice"] == "share" and "negated" not in json.loads(lines[0])


def test_user_store_notices_changes_by_another_process(tmp_path, monkeypatch):
    a = PolicyStore(None, tmp_path / "p")
    b = PolicyStore(None, tmp_path / "p")
    b.add("example.org", [_st("We collect your email address.")], {"title": "t", "origin": "o"})
    monkeypatch.setattr(a, "_checked", 0.0)
    assert a.find("example.org") is not None
