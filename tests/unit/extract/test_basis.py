import pytest

from guardian_proxy.extract.basis import basis
from guardian_proxy.types import RawRequest


def req(method="GET", url="https://shop.example.com/x", **h):
    return RawRequest(method=method, url=url, headers=[(k.replace("_", "-"), v) for k, v in h.items()])


@pytest.mark.parametrize("r,recipient,ai,want", [
    (req("POST", sec_fetch_mode="navigate", sec_fetch_dest="document", sec_fetch_site="same-origin",
         sec_fetch_user="?1"), "first_party", False, "user"),  # form submit
    (req(sec_fetch_mode="navigate", sec_fetch_dest="document", sec_fetch_site="none"), "first_party", False, "user"),
    (req(sec_fetch_mode="navigate", sec_fetch_dest="document", sec_fetch_site="same-origin"), "first_party", False,
     "default"),  # script redirect, no activation
    (req(sec_fetch_mode="navigate", sec_fetch_dest="iframe", sec_fetch_site="cross-site"), "social", False,
     "background"),
    (req(sec_fetch_mode="cors", sec_fetch_dest="empty", sec_fetch_site="same-origin"), "first_party", False,
     "default"),  # the page's own fetch
    (req(sec_fetch_mode="cors", sec_fetch_dest="empty", sec_fetch_site="cross-site"), "analytics", False,
     "background"),
    (req("POST", sec_fetch_mode="no-cors", sec_fetch_dest="empty", content_type="text/plain"), "unknown_third_party",
     False, "background"),  # sendBeacon
    (req(sec_fetch_mode="no-cors", sec_fetch_dest="image", sec_fetch_site="cross-site"), "ad_network", False,
     "background"),  # pixel
    (req("POST", ping_from="https://a.example/", ping_to="https://b.example/"), "first_party", False, "background"),
    (req("POST", content_type="application/csp-report"), "first_party", False, "background"),
    (req(sec_purpose="prefetch", sec_fetch_mode="navigate", sec_fetch_site="same-origin"), "first_party", False,
     "background"),
    (req("POST", sec_fetch_mode="cors", sec_fetch_dest="empty", sec_fetch_site="cross-site"), "ai_service", True,
     "user"),  # prompt typed in a web chat
    (req("POST", user_agent="OpenAI/Python 1.35.3"), "ai_service", True, "user"),  # agent / SDK
    (req("POST", url="https://telemetry.tool.example/v1/metrics", user_agent="tool/1.0"), "first_party", False,
     "background"),
    (req(user_agent="curl/8.5.0"), "unknown_third_party", False, "default"),
    # Node's fetch (undici) sends Sec-Fetch-Mode: cors and no other Fetch Metadata: a script, as curl
    (req("POST", url="https://api.tool.example/v1/events", sec_fetch_mode="cors", user_agent="node"), "first_party",
     False, "background"),
    (req("POST", sec_fetch_mode="cors", user_agent="node"), "first_party", False, "default"),
])
def test_basis(r, recipient, ai, want):
    assert basis(r, recipient, ai) == want


def test_node_fetch_is_a_script_not_a_page():
    from guardian_proxy.extract import addressee

    node = req("POST", sec_fetch_mode="cors", accept_language="*", user_agent="node")
    assert not addressee.made_by_page(node) and addressee.client(node) == "tool"
    page = req("POST", sec_fetch_mode="cors", sec_fetch_dest="empty", sec_fetch_site="same-origin")
    assert addressee.made_by_page(page) and addressee.client(page) == "page"
