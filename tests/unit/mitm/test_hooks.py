"""The addon with mitmproxy's own test helpers and the fake gateway of guardian_proxy/testing.py (the real path is in
test_e2e_proxy)."""

import asyncio
import json

from mitmproxy.test import taddons, tflow

from guardian_proxy.mitm.blocking import apply_decision
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.testing import FakeGateway
from guardian_proxy.testing import decision as _decision
from guardian_proxy.types import Action, Decision, Rewrite


def test_allow_leaves_flow_untouched():
    gw = FakeGateway(_decision("allow"))
    with taddons.context():
        a = GuardianAddon(gw)
        f = tflow.tflow()
        before = f.request.get_state()
        asyncio.run(a.request(f))
        assert f.response is None and f.request.get_state() == before
        assert f.metadata["guardian"]["action"] == "allow"
        assert gw.seen[0].method == f.request.method


def test_deny_answers_403_json_and_html():
    gw = FakeGateway(_decision("deny"))
    with taddons.context():
        a = GuardianAddon(gw)
        f = tflow.tflow()
        asyncio.run(a.request(f))
        assert f.response.status_code == 403
        body = json.loads(f.response.content)
        assert body["error"] == "blocked_by_guardian_proxy" and body["reason"].endswith(" Why: because")  # words first
        f2 = tflow.tflow()
        f2.request.headers["accept"] = "text/html,application/xhtml+xml"
        asyncio.run(a.request(f2))
        assert b"Blocked by guardian-proxy" in f2.response.content


def test_transform_sets_body_and_length():
    f = tflow.tflow()
    f.request.headers["content-length"] = "7"
    apply_decision(f, _decision("transform", rewrite=Rewrite(body=b'{"a":"[PERSON_1]"}', url="http://address:22/p?q=1")))
    assert f.request.raw_content == b'{"a":"[PERSON_1]"}'
    assert f.request.headers["content-length"] == str(len(b'{"a":"[PERSON_1]"}'))
    assert f.request.query["q"] == "1"


def test_guard_skips_flows_with_response():
    gw = FakeGateway(_decision("deny"))
    with taddons.context():
        a = GuardianAddon(gw)
        f = tflow.tflow(resp=True)
        asyncio.run(a.request(f))
        assert gw.seen == [] and f.response.status_code == 200


def test_stream_that_holds_back_never_sends_an_empty_chunk():
    from guardian_proxy.mitm.replies import never_empty

    held = never_empty(lambda data: b"" if data != b"x" else b"x")
    assert held(b"partial") == [] and held(b"x") == b"x" and held(b"") == []


def test_blocked_requests_are_answered_by_what_sent_them():
    """Navigations get the page; a browser's tracker calls and beacons a silent 204 (or a GIF for a pixel), with
    CORS headers, so SDKs do not retry; other fetches and non-browser clients a readable JSON 403."""
    def blocked(headers, recipient="analytics", basis="background"):
        d = Decision(action="deny", six=Action(domain="t.example", host="t.example", recipient=recipient,
                                               basis=basis), explanation="because")
        f = tflow.tflow()
        f.request.headers.clear()
        for k, v in headers.items():
            f.request.headers[k] = v
        apply_decision(f, d)
        return f.response

    page = blocked({"sec-fetch-mode": "navigate", "sec-fetch-dest": "document"})
    assert page.status_code == 403 and b"Blocked by guardian-proxy" in page.content
    beacon = blocked({"sec-fetch-mode": "no-cors", "sec-fetch-dest": "empty", "origin": "https://shop.example"})
    assert beacon.status_code == 204 and beacon.headers["access-control-allow-origin"] == "https://shop.example"
    assert beacon.headers["x-guardian-blocked"] == "silent" and beacon.headers["x-guardian-decision"]
    xhr = blocked({"sec-fetch-mode": "cors", "sec-fetch-dest": "empty", "origin": "https://shop.example"})
    assert xhr.status_code == 204 and xhr.headers["access-control-allow-credentials"] == "true"
    pixel = blocked({"sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"}, recipient="ad_network")
    assert pixel.status_code == 200 and pixel.headers["content-type"] == "image/gif" and pixel.content[:6] == b"GIF89a"
    own = blocked({"sec-fetch-mode": "cors", "sec-fetch-dest": "empty", "origin": "https://app.example"},
                  recipient="first_party", basis="default")
    assert own.status_code == 403 and json.loads(own.content)["error"] == "blocked_by_guardian_proxy"
    assert own.headers["access-control-allow-origin"] == "https://app.example"  # the page can read why
    sdk = blocked({"content-type": "application/json"})  # a server-side SDK: 4xx, which SDKs do not retry
    assert sdk.status_code == 403
