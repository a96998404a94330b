"""Fail closed wherever the addon runs (docs/mitmproxy-addon.md): the guardian loaded by mitmproxy's own tools
(`mitmdump -s "$(guardian-proxy addon-path)"`, `mitmweb -s …`), real processes and real clients.

- a bad `guardian_*` value stops mitmproxy in one line naming the option; before, mitmproxy aborted loading the
  script silently and forwarded every request undecided;
- a request that arrives while the models load waits for the gateway and is decided (and logged), never
  forwarded undecided;
- upstream connections are lazy: a blocked request never opens a connection to its upstream (before, under
  mitmdump a blocked HTTPS request had already connected to the tracker at CONNECT time);
- mitmproxy's default listen address (every interface) becomes loopback; beyond it needs
  `--set guardian_allow_remote=true` and `--proxyauth`, else mitmproxy refuses to start in one line.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.support.mitmdump_process import READY, counting_upstream, listening_on, start_mitm

pytestmark = pytest.mark.slow

EMAIL = "jane.doe.1987@gmail.com"
GA = f"/collect?v=1&tid=UA-12345-1&cid=555&t=pageview&uid={EMAIL}"


def _email_reached(up) -> bool:
    return any(EMAIL in r.path or EMAIL.encode() in r.body or "1987%40gmail" in r.path for r in up.received)


def _one_error_line(text: str, *needles: str) -> str:
    assert "Traceback" not in text, text
    lines = [x for x in text.splitlines() if all(n in x for n in needles)]
    assert len(lines) == 1, text
    return lines[0]


# ------------------------------------------------------------------------------------------- a bad guardian_* value

BAD = [("mitmdump", "guardian_workers=abc"), ("mitmdump", "guardian_workers=-2"),
       ("mitmdump", "guardian_dashboard_port=http"), ("mitmdump", "guardian_redirect_upstream=nonsense"),
       ("mitmdump", "guardian_allow_remote=maybe"), ("mitmweb", "guardian_workers=abc")]


@pytest.mark.parametrize(("tool", "setting"), BAD)
def test_a_bad_guardian_value_stops_mitmproxy_in_one_line_and_nothing_passes(tmp_path, tool, setting):
    """mitmproxy's own upstream mode sends every request it forwards to the local upstream, with or without the
    guardian: so a request that passed undecided would be seen there."""
    up = counting_upstream()
    m = start_mitm(tmp_path, "--mode", f"upstream:http://127.0.0.1:{up.port}", "--set", setting, tool=tool,
                   workers=None)
    statuses = []
    try:
        deadline = time.monotonic() + 120
        while m.proc.poll() is None and time.monotonic() < deadline and not up.up.received:
            if m.listening():
                try:
                    statuses.append(httpx.get(f"http://www.google-analytics.com{GA}", proxy=m.url, timeout=5).status_code)
                except httpx.HTTPError:
                    pass
            time.sleep(0.05)
        assert not _email_reached(up.up), f"forwarded undecided (answers {statuses}):\n{m.text()}"
        assert m.proc.poll() is not None, f"mitmproxy still running with {setting}:\n{m.text()}"
        assert m.proc.returncode != 0
    finally:
        m.stop()
        up.close()
    name = setting.partition("=")[0]
    _one_error_line(m.text(), "guardian-proxy cannot start", name)
    assert all(s == 503 for s in statuses), statuses  # a request in the moment before the exit: refused
    assert READY not in m.text()


# ------------------------------------------------------------------------- start-up, lazy connections, loopback

NAMES = ["www.google-analytics.com", "ads.doubleclick.net", "www.example.org"]


@pytest.fixture(scope="module", params=["mitmdump", "mitmweb"])
def guarded(request, tmp_path_factory):
    """A guardian under `tool`, an e-mail in a google-analytics query sent as soon as the proxy listens (while the
    models load), then ready. `connection_strategy=eager` is asked for: the guardian makes it lazy."""
    tmp = tmp_path_factory.mktemp(request.param)
    up = counting_upstream(tmp, NAMES)
    m = start_mitm(tmp, "--set", f"guardian_redirect_upstream=127.0.0.1:{up.port}", "--set", "ssl_insecure=true",
                   "--set", "connection_strategy=eager", tool=request.param)
    early: dict = {}
    try:
        if not m.wait_for(lambda x: x.listening() and m.ca.exists()):
            raise RuntimeError(m.text())
        early["before_ready"] = READY not in m.text()

        def send():
            try:
                early["response"] = httpx.get(f"https://www.google-analytics.com{GA}", proxy=m.url, verify=str(m.ca),
                                              timeout=300)
            except httpx.HTTPError as e:
                early["error"] = e

        t = threading.Thread(target=send)
        t.start()
        m.wait_ready()
        t.join(300)
        yield m, up, early
    finally:
        m.stop()
        up.close()


def test_a_request_at_start_up_waits_for_the_gateway_and_is_decided(guarded):
    m, up, early = guarded
    assert early["before_ready"], "sent after the gateway was ready: the test proves nothing"
    assert "response" in early, early.get("error")
    assert early["response"].status_code != 503
    assert not _email_reached(up.up)
    lines = [x for x in m.log_lines() if x.get("host") == "www.google-analytics.com"]
    assert lines and lines[0]["action"] in ("deny", "transform"), lines


def test_a_blocked_request_opens_no_upstream_connection(guarded):
    m, up, _ = guarded
    before = up.accepted
    r = httpx.post("https://ads.doubleclick.net/collect", proxy=m.url, verify=str(m.ca),
                   json={"pan": "4111 1111 1111 1111"}, timeout=120)
    assert r.status_code == 403 and r.headers.get("x-guardian-decision")
    assert up.accepted == before, "the blocked request connected to its upstream"
    r = httpx.get("https://www.example.org/", proxy=m.url, verify=str(m.ca), timeout=120)  # the counter counts
    assert r.status_code == 200 and up.accepted > before


def test_mitmproxy_default_listen_address_becomes_loopback(guarded):
    m, _, _ = guarded
    assert {h for h, _ in m.listening()} == {"127.0.0.1"}, m.text()
    assert listening_on(m.port) == {"127.0.0.1"}


# ------------------------------------------------------------------------------------------- beyond loopback

REFUSED = [(["--listen-host", "0.0.0.0"], "refusing to listen on 0.0.0.0:0 (every interface)"),
           (["--mode", "regular@0.0.0.0:0"], "refusing to listen on 0.0.0.0:0 (every interface)"),
           (["--listen-host", "::", "--set", "guardian_allow_remote=true"],
            "needs proxy authentication to listen on [::]:0 (every interface)")]


@pytest.mark.parametrize(("args", "said"), REFUSED)
def test_an_address_beyond_loopback_without_both_permissions_is_refused(tmp_path, args, said):
    m = start_mitm(tmp_path, *args)
    try:
        rc = m.wait_exit(120)
    finally:
        m.stop()
    line = _one_error_line(m.text(), "guardian-proxy cannot start")
    assert rc != 0 and said in line and "--proxyauth" in line and "guardian_allow_remote" in line, line
    assert READY not in m.text()


def test_beyond_loopback_with_allow_remote_and_proxyauth(tmp_path):
    up = counting_upstream()
    m = start_mitm(tmp_path, "--listen-host", "0.0.0.0", "--set", "guardian_allow_remote=true", "--proxyauth",
                   "alice:s3cret", "--set", f"guardian_redirect_upstream=127.0.0.1:{up.port}")
    try:
        m.wait_ready()
        assert "0.0.0.0" in listening_on(m.port)
        r = httpx.get("http://www.example.org/", proxy=m.url, timeout=60)
        assert r.status_code == 407 and not up.up.received
        r = httpx.get("http://www.example.org/", proxy=f"http://alice:s3cret@127.0.0.1:{m.port}", timeout=60)
        assert r.status_code == 200 and up.up.received
    finally:
        m.stop()
        up.close()
