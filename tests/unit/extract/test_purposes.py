import pytest

from guardian_proxy.extract.purposes import purposes
from guardian_proxy.types import PURPOSES


@pytest.mark.parametrize("path,keys,recipient,kw,want", [
    ("/g/collect", ["tid", "cid"], "analytics", {}, ["analytics"]),
    ("/tr/", ["ev", "ud[em]"], "ad_network", {}, ["advertising"]),
    ("/login", ["email", "password"], "first_party", {}, ["authentication"]),
    ("/api/checkout", ["card_number"], "first_party", {}, ["payment"]),
    ("/search", ["q"], "first_party", {"basis": "user"}, ["functionality"]),
    ("/v1/chat/completions", ["messages"], "ai_service", {"ai_call": True}, ["ai_processing"]),
    ("/v1/messages", ["messages"], "ai_service", {"ai_call": True}, ["ai_processing"]),
    ("/recaptcha/api2/reload", ["k"], "service_provider", {}, ["security"]),
    ("/v1/identify", ["userId"], "analytics", {}, ["profiling", "analytics"]),
    ("/track/cmf/generic", ["ttd_pid"], "ad_network", {}, ["profiling", "analytics", "advertising"]),
    ("/api/recommendations", [], "first_party", {}, ["personalization"]),
    ("/graphql", [], "first_party", {"operation": "UpdateProfile"}, ["functionality"]),
    ("/page/about", ["dl"], "first_party", {}, ["unknown"]),  # "page" is a tracking word only for trackers
    ("/v1/events", [], "first_party", {"host_words": "telemetry"}, ["analytics"]),
    ("/x", [], "data_broker", {}, ["profiling"]),
    ("/x", [], "first_party", {"basis": "user"}, ["functionality"]),
    ("/x", [], "unknown_third_party", {}, ["unknown"]),
])
def test_purposes(path, keys, recipient, kw, want):
    got = purposes(path, keys, recipient, **kw)
    assert got == want
    assert set(got) <= set(PURPOSES)
