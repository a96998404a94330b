"""guardian_proxy.policy.segment: documents → atomic statements with context."""

import pytest

from guardian_proxy.policy.documents import to_text
from guardian_proxy.policy.segment import Segmenter

POLICY = """# Example Privacy Policy

## What we collect

When you register, we collect your name, email address and phone number. Our pages are fast.

## How we share information

We share information with the following recipients:

* Advertising partners, to show you relevant ads.
* Service providers who host our website.

We do not sell your personal information. Do we sell data?

## Retention

We keep server logs for 90 days.
"""


@pytest.fixture(scope="module")
def statements():
    return Segmenter().segment(to_text(POLICY, name="p.md"), "example.com", source="Example Privacy Policy")


def test_sentences_become_statements_with_offsets(statements):
    doc = to_text(POLICY, name="p.md")
    for s in statements:
        assert doc.text[s.start:s.end] == s.text
        assert s.domain == "example.com" and s.source == "Example Privacy Policy" and s.id.startswith("example.com:")
    texts = [s.text for s in statements]
    assert not any("fast" in t for t in texts)  # no practice, no field: not a statement
    assert not any(t.endswith("?") for t in texts)


def test_collection_statement(statements):
    s = next(s for s in statements if "register" in s.text)
    assert s.practice == "collect" and {"contact", "identity"} <= set(s.data_categories)
    assert s.section == "What we collect" and "first_party" in s.recipients


def test_list_items_inherit_the_lead_in(statements):
    ads = next(s for s in statements if s.text.startswith("Advertising partners"))
    assert ads.practice == "share" and "ad_network" in ads.recipients and "advertising" in ads.purposes
    hosts = next(s for s in statements if s.text.startswith("Service providers"))
    assert hosts.practice == "share" and "service_provider" in hosts.recipients


def test_negation_and_retention(statements):
    sell = next(s for s in statements if "sell" in s.text)
    assert sell.practice == "sell" and sell.negated
    logs = next(s for s in statements if "90 days" in s.text)
    assert logs.practice == "retain" and logs.retention == "90 days" and logs.section == "Retention"


def test_non_english_sentences_inside_an_english_page_are_skipped():
    text = ("We collect your email address to send receipts.\n\n"
            "Wir erheben Ihre E-Mail-Adresse, um Ihnen Quittungen zu senden und unsere Dienste zu verbessern.\n")
    sts = Segmenter().segment(to_text(text), "x.com")
    assert [s.text for s in sts] == ["We collect your email address to send receipts."]


def test_statement_cap():
    text = "We collect your email address for login.\n\n" * 50
    assert len(Segmenter().segment(to_text(text), "x.com", max_statements=10)) == 10
