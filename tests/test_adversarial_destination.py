"""The destination is where the connection goes, never what the Host header claims; values spelled into host
labels are read (R-DESTINATION; docs/security.md)."""

from __future__ import annotations

import socket
import ssl

import httpx
import pytest
from mitmproxy.test import tflow, tutils

from guardian_proxy.mitm.flows import destination, to_raw
from guardian_proxy.overrides import Override, OverrideStore
from guardian_proxy.types import RawRequest
from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

CARD, SSN = "4111 1111 1111 1111", "536-22-1234"


def _flow(host: str, host_header: str | None, scheme: str = "http", sni: str | None = None, http2: bool = False):
    req = tutils.treq(host=host, port=443 if scheme == "https" else 80, scheme=scheme.encode(),
                      http_version=b"HTTP/2.0" if http2 else b"HTTP/1.1")
    req.headers.pop("host", None)
    if host_header is not None:
        if http2:
            req.authority = host_header
        else:
            req.headers["Host"] = host_header
    f = tflow.tflow(req=req)
    f.client_conn.sni = sni
    return f


def test_host_header_does_not_choose_the_destination():
    f = _flow("stats.g.doubleclick.net", "mybank.example")
    raw = to_raw(f)
    assert raw.host == "stats.g.doubleclick.net"
    assert raw.claimed_host == "mybank.example"


def test_http2_authority_is_the_claim_and_agreement_is_no_finding():
    assert destination(_flow("api.example.com", "mybank.example", "https", http2=True)) == \
        ("api.example.com", "mybank.example")
    assert destination(_flow("api.example.com", "API.Example.com.:443", "https")) == ("api.example.com", None)
    assert destination(_flow("api.example.com", None)) == ("api.example.com", None)


def test_transparent_tls_goes_to_the_sni_name():
    f = _flow("93.184.216.34", "mybank.example", "https", sni="stats.g.doubleclick.net")
    assert destination(f) == ("stats.g.doubleclick.net", "mybank.example")


def test_transparent_plain_http_is_pinned_to_the_name_decided_on():
    f = _flow("93.184.216.34", "tracker.example")
    host, claimed = destination(f)
    assert (host, claimed) == ("tracker.example", None)
    assert f.request.host == "tracker.example"  # mitmproxy now connects to the name that was decided on


def _post(url: str, body: str, claimed: str | None = None) -> RawRequest:
    headers = [("content-type", "text/plain")]
    return RawRequest(method="POST", url=url, body=body.encode(), headers=headers, claimed_host=claimed)


@pytest.fixture
def allow_mybank(gateway):
    saved = gateway.overrides
    gateway.overrides = OverrideStore(None, [Override(action="allow", domain="mybank.example")])
    yield gateway
    gateway.overrides = saved


def test_an_allow_override_of_the_claimed_host_does_not_apply(allow_mybank):
    gw = allow_mybank
    d = gw.evaluate(_post("https://stats.g.doubleclick.net/collect", f"card {CARD} ssn {SSN}", "mybank.example"))
    assert d.action != "allow" and d.override is None
    assert d.six.host == "stats.g.doubleclick.net" and "host_mismatch" in d.six.flags
    honest = gw.evaluate(_post("https://mybank.example/pay", f"card {CARD}"))
    assert honest.action == "allow" and honest.override


@pytest.mark.parametrize("host, entity", [
    ("jane-doe-536-22-1234.stats.g.doubleclick.net", "US_SSN"),
    ("4111111111111111.px.ads.linkedin.com", "CREDIT_CARD"),
    ("jane.doe.4111-1111-1111-1111.t.tracker-example.com", "CREDIT_CARD"),
])
def test_values_in_host_labels_are_found_and_block(gateway, host, entity):
    gw = gateway
    d = gw.evaluate(RawRequest(method="GET", url=f"https://{host}/p.gif"))
    assert entity in {s.entity for s in d.six.spans if s.path == "host:"}
    assert d.action == "deny"


def test_host_labels_of_everyday_hosts_hold_nothing(gateway):
    gw = gateway
    for host in ("ec2-54-123-45-67.compute-1.amazonaws.com", "rr5---sn-4g5edn7s.googlevideo.com",
                 "scontent-lhr8-1.xx.fbcdn.net", "d1234567890abc.cloudfront.net", "e12345.dscb.akamaiedge.net",
                 "us-central1-aiplatform.googleapis.com", "2b4c3a1f9e8d7c6b5a4f3e2d1c0b9a8f.safeframe."
                 "googlesyndication.com", "ip-172-31-20-15.eu-west-1.compute.internal"):
        d = gw.evaluate(RawRequest(method="GET", url=f"https://{host}/x.js"))
        assert not [s for s in d.six.spans if s.path == "host:"], host
        assert d.action == "allow", (host, d.explanation)


def test_a_host_replacement_is_never_dropped_silently():
    from guardian_proxy.anonymize.transformer import Transformer
    from guardian_proxy.errors import BodyError
    from guardian_proxy.types import Action

    with pytest.raises(BodyError):
        Transformer.rewrite(RawRequest(method="GET", url="https://a.example/"), Action(domain="a", host="a"),
                            {"host:": "x"})


# ------------------------------------------------------------------ through a real proxy


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    d = tmp_path_factory.mktemp("dest")
    up = start_upstream(tls_dir=d, names=["stats.g.doubleclick.net", "mybank.example"])
    OverrideStore(d / "state" / "overrides.yaml").add(Override(action="allow", domain="mybank.example"))
    px = start_proxy(d, up.port)
    yield up, px
    px.stop()
    up.close()


def _arrived(up, n: int) -> bytes:
    return b"\n".join(r.body + repr(r.headers).encode() + r.path.encode() for r in up.received[n:])


@pytest.mark.slow
def test_e2e_spoofed_host_over_https_is_decided_on_the_real_destination(proxied):
    up, px = proxied
    n = len(up.received)
    body = f"card={CARD.replace(' ', '')}&ssn={SSN}"
    r = httpx.post("https://stats.g.doubleclick.net/collect", content=body, proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)),
                   headers={"Host": "mybank.example", "content-type": "application/x-www-form-urlencoded"})
    assert r.status_code in (204, 403)
    assert b"4111111111111111" not in _arrived(up, n) and SSN.encode() not in _arrived(up, n)
    line = next(x for x in reversed(px.log_lines()) if x["path"].startswith("/collect"))
    assert line["host"] == "stats.g.doubleclick.net" and "host_mismatch" in line["flags"]


@pytest.mark.slow
def test_e2e_spoofed_host_in_absolute_form_and_localhost(proxied):
    up, px = proxied
    for claimed in ("mybank.example", "localhost"):
        n = len(up.received)
        payload = f"card {CARD} ssn {SSN}".encode()
        head = (f"POST http://stats.g.doubleclick.net/c HTTP/1.1\r\nHost: {claimed}\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode()
        with socket.create_connection(("127.0.0.1", px.port), timeout=30) as s:
            s.sendall(head + payload)
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        assert answer.split(b" ", 2)[1] in (b"204", b"403"), answer[:200]
        assert b"4111 1111" not in _arrived(up, n)


@pytest.mark.slow
def test_e2e_honest_request_to_the_overridden_host_still_passes(proxied):
    up, px = proxied
    n = len(up.received)
    r = httpx.post("https://mybank.example/pay", content=f"card {CARD}", proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)),
                   headers={"content-type": "text/plain"})
    assert r.status_code == 200
    assert CARD.encode() in _arrived(up, n)


@pytest.mark.slow
def test_e2e_ssn_in_host_labels_never_arrives(proxied):
    up, px = proxied
    n = len(up.received)
    ctx = ssl.create_default_context(cafile=str(px.ca))
    r = httpx.get("https://jane-doe-536-22-1234.stats.g.doubleclick.net/p.gif", proxy=px.url, verify=ctx)
    assert r.status_code in (200, 204, 403)
    assert len(up.received) == n


def test_raw_stream_bytes_are_never_rewritten(gateway):
    body = b'{"name":"Jane Doe","email":"jane.doe@example.com","msg":"see you at the station"}\n'
    d = gateway.evaluate(RawRequest(method="SEND", url="tcp://chat.example.net:7000/", body=body,
                                    headers=[("content-type", "application/octet-stream")]))
    assert d.action == "deny" and d.rewrite is None
    opened = gateway.evaluate(RawRequest(method="OPEN", url="tcp://stats.g.doubleclick.net:7000/"))
    assert opened.action == "deny" and opened.rule == "raw-stream-tracker"
    assert gateway.evaluate(RawRequest(method="OPEN", url="tcp://db.example.org:5432/")).action == "allow"
