"""Learning policies while browsing: the addon's response hook → Gateway.learn_policy → user store.

Unit level with mitmproxy's test helpers and a real Gateway/EvidenceStage; end to end through a real
`guardian-proxy run` process and a real upstream serving a privacy page (slow)."""

import asyncio
import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from mitmproxy.test import taddons, tflow

from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.pipeline import Gateway
from guardian_proxy.policy import EvidenceStage
from guardian_proxy.resources import policies_dir

PAGE = (b"<html><head><title>Privacy Notice</title></head><body><nav>Menu</nav><h1>Privacy Notice</h1>"
        b"<p>We collect your email address and IP address when you visit.</p>"
        b"<p>We share device identifiers with advertising partners for interest-based advertising.</p>"
        b"<p>You can opt out of marketing emails at any time.</p></body></html>")


def _gateway(tmp_path, learn=True):
    s = load_settings(state_dir=tmp_path, learn_policies=learn)
    ev = EvidenceStage.from_dirs(policies_dir(), tmp_path / "policies")
    return Gateway(s, load_factor_tables(), None, ev, None, None)


def _flow(url, body=PAGE, ctype="text/html; charset=utf-8", status=200, encoding=None):
    f = tflow.tflow(resp=True)
    f.request.url = url
    f.response.status_code = status
    f.response.headers["content-type"] = ctype
    if encoding:
        f.response.headers["content-encoding"] = encoding
    f.response.raw_content = body
    return f


def _run(addon, flow):
    asyncio.run(addon.response(flow))
    if addon.learn_pool is not None:
        addon.learn_pool.shutdown(wait=True)
        addon.learn_pool = None


def test_policy_page_is_learned_off_the_loop(tmp_path):
    gw = _gateway(tmp_path)
    with taddons.context():
        a = GuardianAddon(gw)
        f = _flow("https://www.news-site.com/privacy", gzip.compress(PAGE), encoding="gzip")
        before = f.response.get_state()
        _run(a, f)
        assert f.response.get_state() == before  # the response is never touched
    p = gw.evidence.store.find("news-site.com")
    assert p is not None and p.source == "user" and p.count == 3
    log = json.loads((tmp_path / "policies" / "learned.jsonl").read_text())
    assert log["domain"] == "news-site.com" and log["stored"] and log["statements"] == 3


@pytest.mark.parametrize("kw", [
    {"url": "https://www.news-site.com/article/1"},  # not a policy URL
    {"url": "https://www.news-site.com/privacy", "ctype": "application/json"},
    {"url": "https://www.news-site.com/privacy", "status": 404},
    {"url": "https://www.news-site.com/privacy", "body": b""},
])
def test_other_responses_are_ignored(tmp_path, kw):
    gw = _gateway(tmp_path)
    with taddons.context():
        a = GuardianAddon(gw)
        _run(a, _flow(**kw))
        assert a.learn_pool is None
    assert gw.evidence.store.find("news-site.com") is None


def test_option_off_and_errors_never_reach_the_proxy(tmp_path):
    gw = _gateway(tmp_path, learn=False)
    with taddons.context():
        a = GuardianAddon(gw)
        _run(a, _flow("https://www.news-site.com/privacy"))
        assert gw.evidence.store.find("news-site.com") is None
        gw.settings.learn_policies = True
        _run(a, _flow("https://www.news-site.com/privacy", b"\x1f\x8b broken gzip", encoding="gzip"))
        f = tflow.tflow(resp=True, err=True)
        _run(a, f)
        g = _gateway(tmp_path)
        g.evidence.learn = lambda *a: 1 / 0  # a bug in ingestion is logged, not raised
        assert g.learn_policy("https://x.com/privacy", "text/html", "x") is None


def test_event_loop_is_not_blocked(tmp_path):
    gw = _gateway(tmp_path)
    gw.evidence.learn = lambda *a: time.sleep(1.0)

    async def main():
        with taddons.context():
            a = GuardianAddon(gw)
            t = time.perf_counter()
            await a.response(_flow("https://www.news-site.com/privacy"))
            await asyncio.sleep(0)
            elapsed = time.perf_counter() - t
            a.learn_pool.shutdown(wait=True)
            return elapsed

    assert asyncio.run(main()) < 0.2


# ------------------------------------------------------------------ end to end (real proxy process)


class _Pages(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


@pytest.mark.slow
def test_e2e_browsing_a_privacy_page_teaches_the_proxy(tmp_path):
    from tests.support.proxy_process import start_proxy

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = start_proxy(tmp_path, upstream_port=server.server_address[1])
    try:
        with httpx.Client(proxy=proxy.url, timeout=30) as c:
            r = c.get("http://www.news-site.com/legal/privacy-notice")
            assert r.status_code == 200 and r.content == PAGE
        learned = tmp_path / "state" / "policies" / "learned.jsonl"
        deadline = time.time() + 30
        while time.time() < deadline and not learned.exists():
            time.sleep(0.2)
        rec = json.loads(learned.read_text().splitlines()[0])
        assert rec["domain"] == "news-site.com" and rec["stored"] and rec["statements"] == 3
        index = json.loads((tmp_path / "state" / "policies" / "index.json").read_text())
        assert index["policies"][0]["domain"] == "news-site.com"
    finally:
        proxy.stop()
        server.shutdown()
