"""The addon with mitmproxy's own test helpers and a fake gateway (the real path is in test_e2e_proxy)."""

import asyncio
import json

from mitmproxy.test import taddons, tflow

from guardian_proxy.addon import GuardianAddon, apply_decision
from guardian_proxy.types import Action, Decision, Rewrite


class FakeGateway:
    def __init__(self, decision):
        self.decision = decision
        self.seen = []

    def evaluate_inline(self, raw, ticket=None):
        return None  # no event-loop fast path: every request goes through `evaluate`

    def evaluate(self, raw, **kw):
        self.seen.append(raw)
        return self.decision

    def failure_decision(self, raw, exc, ticket=None):
        return Decision(action="deny", six=Action(domain="x", host="x"), rule="error-fail-closed")


def _decision(kind, **kw):
    return Decision(action=kind, six=Action(domain="example.com", host="example.com"), explanation="because", **kw)


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
        assert body["error"] == "blocked_by_guardian_proxy" and body["reason"] == "because"
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
    from guardian_proxy.addon import never_empty

    held = never_empty(lambda data: b"" if data != b"x" else b"x")
    assert held(b"partial") == [] and held(b"x") == b"x" and held(b"") == []
