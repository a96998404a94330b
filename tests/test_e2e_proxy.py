"""End to end: a real `guardian-proxy run`, real local HTTP and TLS upstreams, real clients (httpx, curl)."""

import json
import re
import shutil
import subprocess

import httpx
import pytest

from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow
#: a phone app's SDK: not a page, not the user's own client (a request from curl or httpx is addressed to its host)
APP = {"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"}


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    up = start_upstream()
    px = start_proxy(tmp_path_factory.mktemp("px"), up.port)
    yield up, px
    px.stop()
    up.close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    up = start_upstream(tls_dir=d, names=["support.zendesk.com", "ads.doubleclick.net", "www.example.org"])
    px = start_proxy(d, up.port)
    yield up, px
    px.stop()
    up.close()


def test_plain_get_arrives_unchanged(plain):
    up, px = plain
    n = len(up.received)
    r = httpx.get("http://www.example.org/page?x=1", proxy=px.url, headers={"x-test": "1"})
    assert r.status_code == 200
    got = up.received[n]
    assert got.method == "GET" and got.path == "/page?x=1" and got.headers["x-test"] == "1"
    assert got.headers["host"] == "www.example.org"


def test_card_to_ad_network_blocked_never_arrives(plain):
    up, px = plain
    n = len(up.received)
    r = httpx.post("http://ads.doubleclick.net/collect", proxy=px.url, json={"pan": "4111 1111 1111 1111"})
    assert r.status_code == 403
    assert r.json()["error"] == "blocked_by_guardian_proxy" and r.json()["decision_id"]
    assert len(up.received) == n


def test_json_with_name_and_email_arrives_rewritten(plain):
    up, px = plain
    n = len(up.received)
    body = {"ticket": {"text": "Please call John Smith back at john.smith@example.com", "priority": 2}}
    # a phone app's SDK sent it (from curl or a script it would be the user's own client addressing its host)
    r = httpx.post("http://support.zendesk.com/api/tickets", proxy=px.url, json=body, headers=APP)
    assert r.status_code == 200
    got = up.received[n]
    data = json.loads(got.body)  # still valid JSON, same shape
    assert set(data["ticket"]) == {"text", "priority"} and data["ticket"]["priority"] == 2
    assert "john.smith@example.com" not in got.body.decode() and "John Smith" not in got.body.decode()
    assert int(got.headers["content-length"]) == len(got.body)


def test_https_through_curl_and_httpx(tls):
    up, px = tls
    px_ca = str(px.ca)
    n = len(up.received)
    r = httpx.post("https://support.zendesk.com/api/tickets", proxy=px.url, verify=px_ca, headers=APP,
                   json={"text": "Call John Smith at john.smith@example.com"})
    assert r.status_code == 200
    assert "john.smith@example.com" not in up.received[n].body.decode()
    r = httpx.post("https://ads.doubleclick.net/collect", proxy=px.url, verify=px_ca,
                   json={"card": "4111 1111 1111 1111"})
    assert r.status_code == 403 and len(up.received) == n + 1
    if shutil.which("curl"):
        out = subprocess.run(["curl", "-sS", "--proxy", px.url, "--cacert", px_ca, "https://www.example.org/hello"],
                             capture_output=True, text=True, timeout=30)
        assert json.loads(out.stdout)["path"] == "/hello"
        assert up.received[-1].path == "/hello"


def test_each_request_produced_one_log_line(tmp_path):
    up = start_upstream()
    px = start_proxy(tmp_path, up.port)
    try:
        httpx.get("http://www.example.org/", proxy=px.url)
        httpx.post("http://ads.doubleclick.net/collect", proxy=px.url, json={"pan": "4111 1111 1111 1111"})
        httpx.post("http://support.zendesk.com/api/t", proxy=px.url, json={"t": "John Smith, john.smith@example.com"},
                   headers=APP)
    finally:
        px.stop()
        up.close()
    lines = px.log_lines()
    assert [x["action"] for x in lines] == ["allow", "deny", "transform"]
    raw = px.log_path.read_text()
    assert not re.search(r"4111[ -]?1111", raw) and "john.smith" not in raw
