"""guardian_proxy.policy.lexicon: one sentence → structured fields."""

import pytest

from guardian_proxy.policy.lexicon import analyse, retention_of
from guardian_proxy.types import CATEGORIES, CONDITIONS, PRACTICES, PURPOSES, RECIPIENT_CLASSES


@pytest.mark.parametrize("text, practice, negated, cats, recs, purps, cond", [
    ("We share your email address with advertising partners for targeted advertising.",
     "share", False, {"contact"}, {"ad_network"}, {"advertising"}, None),
    ("We do not sell your personal information.", "sell", True, {"other"}, set(), set(), None),
    ("We collect your IP address and device identifiers automatically.", "collect", False, {"device_id"}, {"first_party"},
     set(), None),
    ("We may disclose information to law enforcement when required by law.", "share", False, set(),
     {"unknown_third_party"}, set(), "legal requirement"),
    ("You can opt out of interest-based advertising in your settings.", "choice", False, set(), set(), {"advertising"},
     "opt-out"),
    ("We share aggregated, de-identified statistics with our partners.", "share", False, set(), {"unknown_third_party"},
     {"analytics"}, "aggregated/de-identified"),
    ("We use encryption to protect your payment card details.", "protect", False, {"financial"}, set(), set(), None),
    ("Our service providers process your health information on our behalf.", "use", False, {"health"},
     {"service_provider"}, set(), None),
    ("With your consent, we share your precise location with Facebook.", "share", False, {"precise_location"},
     {"social"}, set(), "opt-in"),
    ("You can request deletion of your account data at any time.", "delete", False, set(), set(), set(), None),
])
def test_fields(text, practice, negated, cats, recs, purps, cond):
    f = analyse(text)
    assert f.practice == practice and f.negated == negated
    assert cats <= set(f.data_categories), f.data_categories
    assert recs <= set(f.recipients), f.recipients
    assert purps <= set(f.purposes), f.purposes
    assert f.condition == cond


def test_retention_values():
    assert retention_of("We retain log data for 13 months.") == "13 months"
    assert retention_of("Cookies are kept for up to two years.") == "2 years"
    assert retention_of("We keep your data as long as necessary to provide the service.") == "as long as necessary"
    assert retention_of("We store your messages until you delete them.") == "until deletion"
    assert retention_of("We respond to requests within 30 days.") is None  # not about keeping data
    f = analyse("We delete search logs after 18 months.")
    assert f.practice == "retain" and f.retention == "18 months"


def test_values_stay_in_the_shared_vocabularies():
    f = analyse("We and our affiliates collect, use, share and sell names, emails, cookies, locations and browsing "
                "history with advertisers, data brokers, AI model providers and analytics providers for profiling, "
                "security and marketing, unless you opt out; we retain it for 2 years.")
    assert set(f.data_categories) <= set(CATEGORIES) and set(f.recipients) <= set(RECIPIENT_CLASSES)
    assert set(f.purposes) <= set(PURPOSES) and f.practice in PRACTICES and f.condition in CONDITIONS
    assert {"ad_network", "data_broker", "ai_service", "analytics", "first_party"} <= set(f.recipients)


def test_generic_language_is_not_specific():
    f = analyse("We may share information with third parties.")
    assert f.practice == "share" and not f.specific
    assert analyse("We share your email with advertisers.").specific
