"""Headers that can carry personal data (guardian_proxy/bodies/headers.py): read, and rewritten in place in their
own format — the same e-mail in a header gets the same verdict as in a body."""

import base64

import pytest

from guardian_proxy.bodies.headers import carries_text, parse_headers, rewrite_headers
from guardian_proxy.types import RawRequest

H = [("Host", "t.example"), ("User-Agent", "Mozilla/5.0 Chrome/156.0.0.0"), ("X-User-Email", "jane@examplemail.com"),
     ("Referer", "https://www.shop.example/done?email=jane%40examplemail.com"), ("From", "jane@examplemail.com"),
     ("Authorization", "Basic " + base64.b64encode(b"jane@examplemail.com:Tr0ub4dor&3").decode()),
     ("X-Tag", "a"), ("X-Tag", "b"), ("Sec-Fetch-Site", "cross-site"), ("X-Amz-Date", "20261201T000000Z"),
     ("X-Request-Id", "4f1c2b3a")]


def test_readable_headers_and_paths():
    got = {f.path: f.text for f in parse_headers(H, third_party=True)}
    assert got == {"header:x-user-email": "jane@examplemail.com",
                   "header:referer": "https://www.shop.example/done?email=jane%40examplemail.com",
                   "header:from": "jane@examplemail.com",
                   "header:authorization>basic:user": "jane@examplemail.com",
                   "header:authorization>basic:password": "Tr0ub4dor&3",
                   "header:x-tag": "a", "header:x-tag#1": "b"}
    # the site's own page addresses are not read on the way to the site itself
    assert "header:referer" not in {f.path for f in parse_headers(H, third_party=False)}
    assert parse_headers([("Authorization", "Bearer abc.def.ghi")], third_party=True) == []
    # Basic credentials sent to anyone but a tracker are the user's own login there
    assert not [f for f in parse_headers(H, third_party=True, own_login=True) if "basic" in f.path]


def test_what_keeps_a_request_off_the_event_loop_fast_path():
    from guardian_proxy.pipeline import Gateway

    get = RawRequest(method="GET", url="https://cdn.example/app.js", headers=[("Referer", "https://www.shop.example/")])
    assert not carries_text(get.headers) and Gateway.inline_ok(get)  # a Referer is read by patterns only
    noted = get.model_copy(update={"headers": get.headers + [("X-Note", "call Jane Doorwright tomorrow")]})
    assert carries_text(noted.headers) and not Gateway.inline_ok(noted)  # free text: NER, in the pool
    basic = [("Authorization", "Basic " + base64.b64encode(b"jane@examplemail.com:pw").decode())]
    assert carries_text(basic) and not carries_text([("Authorization", "Bearer abc.def.ghi")])


def test_rewrite_in_place():
    new = rewrite_headers(H, {"header:x-user-email": "[EMAIL]", "header:authorization>basic:user": "[EMAIL]",
                              "header:x-tag#1": "[T]"})
    assert new["x-user-email"] == "[EMAIL]" and new["x-tag"] == "a, [T]"
    assert base64.b64decode(new["authorization"].split()[1]) == b"[EMAIL]:Tr0ub4dor&3"
    new = rewrite_headers(H, {"header:authorization>basic:password": "[PASSWORD]"})
    assert base64.b64decode(new["authorization"].split()[1]) == b"jane@examplemail.com:[PASSWORD]"
    assert "referer" not in new and rewrite_headers(H, {"json:$.a": "x"}) == {}


@pytest.mark.slow
def test_an_email_in_a_header_to_an_ad_network_never_leaves_raw(gateway):
    req = RawRequest(method="GET", url="https://ads.doubleclick.net/activity;src=1", headers=[
        ("X-User-Email", "jane.doorwright@examplemail.com"), ("Referer", "https://www.shop.example/"),
        ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "no-cors"), ("Sec-Fetch-Dest", "image")])
    d = gateway.evaluate(req, log=False)
    assert d.six.categories.get("contact") and d.action in ("transform", "deny"), d.explanation
    if d.action == "transform":
        assert "jane.doorwright@examplemail.com" not in d.rewrite.set_headers.get("x-user-email", "")
        assert d.rewrite.set_headers["x-user-email"]


def test_basic_credentials_are_the_users_own_login_except_toward_a_tracker(gateway):
    cred = "Basic " + base64.b64encode(b"jane.doorwright@examplemail.com:s3cretPassw0rd").decode()
    own = gateway.evaluate(RawRequest(method="GET", url="https://dav.mybank.example/files/",
                                      headers=[("Authorization", cred)]), log=False)
    assert own.action == "allow", own.explanation
    tracked = gateway.evaluate(RawRequest(method="GET", url="https://www.google-analytics.com/g/collect",
                                          headers=[("Authorization", "Basic " + base64.b64encode(
                                              b"jdoe:s3cretPassw0rd").decode())]), log=False)
    assert tracked.six.categories.get("credentials") and tracked.action != "allow", tracked.explanation
