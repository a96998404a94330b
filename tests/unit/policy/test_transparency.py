"""guardian_proxy.policy.transparency: full / partial / vague / none."""

from guardian_proxy.policy.retrieval import PolicyIndex, Query
from guardian_proxy.policy.transparency import level
from guardian_proxy.types import Statement


def st(i, practice, cats=(), recs=(), purps=()):
    return Statement(id=f"x:{i}", domain="x.com", text="t", practice=practice, data_categories=list(cats),
                     recipients=list(recs), purposes=list(purps))


DETAILED = PolicyIndex([
    st(0, "collect", ["contact"], ["first_party"], ["authentication"]),
    st(1, "share", ["device_id", "contact"], ["ad_network"], ["advertising"]),
    st(2, "use", ["behavioural"], ["first_party"], ["analytics"]),
])
GENERIC = PolicyIndex([
    st(0, "collect", ["other"]),
    st(1, "share", ["other"], ["unknown_third_party"]),
])


def test_none_without_a_policy():
    assert level(None, Query.of(["contact"], ["ad_network"])) == "none"
    assert level(PolicyIndex([]), Query.of(["contact"])) == "none"


def test_full_when_category_recipient_and_purpose_are_disclosed_together():
    assert level(DETAILED, Query.of(["contact"], ["ad_network"], ["advertising"], ["share"])) == "full"
    assert level(DETAILED, Query.of(["contact"], ["first_party"], ["authentication"])) == "full"
    # no declared purpose: a statement naming the category must state some purpose
    assert level(DETAILED, Query.of(["behavioural"], ["first_party"], [])) == "full"


def test_partial_when_only_some_is_disclosed():
    assert level(DETAILED, Query.of(["health"], ["ad_network"], ["advertising"])) == "partial"  # category missing
    assert level(DETAILED, Query.of(["contact"], ["data_broker"], ["profiling"])) == "partial"
    assert level(DETAILED, Query.of(["contact", "health"], ["ad_network"], ["advertising"])) == "partial"


def test_vague_when_the_policy_speaks_only_in_generic_terms():
    assert level(GENERIC, Query.of(["contact"], ["ad_network"], ["advertising"])) == "vague"
    assert level(GENERIC, Query.of(["financial"], ["unknown_third_party"], [])) == "vague"
    assert level(DETAILED, Query.of(["health"], ["data_broker"], ["profiling"])) == "vague"
