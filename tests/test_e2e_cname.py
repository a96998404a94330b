"""End to end (R-CNAME-CLOAKED): a real `guardian-proxy run` whose DNS server is a real local one
(UDP, port 0), local HTTPS upstreams whose certificates a test CA signed, and httpx as the page's client.

`track.shop.example` is a CNAME of a listed cloaked tracker vendor (Eulerian, AdGuard's list): the proxy's own DNS
answer says so, and an e-mail the shop's page sends there is handled as the tracker's, not the shop's. With
`detector.dns_connect` the proxy connects to the address of that same answer (no DNS question of its own: `.example`
names resolve nowhere else), asks once per name (the answer's TTL), and a name without a CNAME is the shop's as before.
Upstream TLS is verified (no --ssl-insecure: `ssl_verify_upstream_trusted_ca` is the test CA) against the name, not
the answered address: the upstream sees SNI `www.shop.example`, and a certificate for another name is refused.
"""

import datetime
import json
import os
import ssl
import subprocess
import threading
from http.server import ThreadingHTTPServer

import httpx
import pytest

from tests.support.dns_server import DnsServer
from tests.support.proxy_process import _LISTENING, BIN, ProxyProcess, _wait_for_banner
from tests.support.upstream import Upstream, _handler

pytestmark = pytest.mark.slow

SHOP, TRACK, WRONG = "www.shop.example", "track.shop.example", "pay.shop.example"
EMAIL = "maria.lindqvist@example.com"


def _ca(d):
    """A test CA (key, certificate) and a signer of leaf certificates for names (no IP address in them)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "guardian test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    (d / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))

    def leaf(tag: str, names: list[str]):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
                .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        cp, kp = d / f"{tag}-cert.pem", d / f"{tag}-key.pem"
        cp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        kp.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))
        return cp, kp

    return d / "ca.pem", leaf


def _tls_upstream(cert_key) -> tuple[Upstream, list[str]]:
    """A recording HTTPS upstream on 127.0.0.1 (port 0) that also records the SNI of every handshake."""
    store, snis = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(store, threading.Lock()))
    httpd.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*cert_key)
    ctx.sni_callback = lambda sock, name, c: snis.append(name)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return Upstream(httpd, store, tls=True), snis


def _start_verified(d, extra: list[str]) -> ProxyProcess:
    """`guardian-proxy run` as tests/support/proxy_process.py starts it, but without --ssl-insecure."""
    state, confdir, out = d / "state", d / "mitmconf", d / "proxy-output.txt"
    args = [str(BIN), "run", "--state-dir", str(state), "--confdir", str(confdir), "--port", "0", "--workers", "1",
            *extra]
    proc = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"))
    m = _LISTENING.search(_wait_for_banner(proc, out, 300.0))
    return ProxyProcess(proc, int(m.group(1)), state, confdir, state / "decisions.jsonl", out)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    d = tmp_path_factory.mktemp("cname")
    ca, leaf = _ca(d)
    up, snis = _tls_upstream(leaf("shop", [SHOP, TRACK]))
    wrong, wrong_snis = _tls_upstream(leaf("wrong", ["elsewhere.example"]))  # the test CA's, for another name
    dns = DnsServer({TRACK: ["shop.example.eulerian.net", "et5.eulerian.net", "127.0.0.1"], SHOP: ["127.0.0.1"],
                     WRONG: ["127.0.0.1"]})
    cfg = d / "guardian.yaml"
    cfg.write_text(f"detector:\n  dns_server: '{dns.addr[0]}:{dns.addr[1]}'\n  dns_connect: true\n")
    # no --redirect-upstream: the DNS answer decides; no --ssl-insecure: the test CA verifies the upstream
    px = _start_verified(d, ["--config", str(cfg), "--set", f"ssl_verify_upstream_trusted_ca={ca}"])
    up.snis, up.wrong, up.wrong_snis = snis, wrong, wrong_snis
    yield up, px, dns
    px.stop()
    dns.close()
    wrong.close()
    up.close()


def _page(port: int) -> dict:
    return {"origin": f"https://{SHOP}:{port}", "referer": f"https://{SHOP}:{port}/checkout",
            "sec-fetch-site": "same-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty"}


def test_email_to_a_cloaked_name_is_the_trackers(stack):
    up, px, dns = stack
    body = json.dumps({"email": EMAIL, "event": "checkout"}).encode()
    with httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60) as c:
        r = c.post(f"https://{TRACK}:{up.port}/collect", content=body,
                   headers={**_page(up.port), "content-type": "application/json"})
        r2 = c.get(f"https://{SHOP}:{up.port}/cart", headers=_page(up.port))
    assert r2.status_code == 200 and r2.json()["path"] == "/cart"  # reached through the answer's address
    lines = px.log_lines()
    line = [x for x in lines if x.get("host") == TRACK][-1]
    assert line["recipient"] == "analytics" and "cname_cloaked" in (line.get("flags") or []), line
    arrived = [x for x in up.received if x.path == "/collect"]
    if r.status_code == 200:  # rewritten, not blocked: the e-mail never arrives as it was
        assert arrived and EMAIL.encode() not in arrived[-1].body
        assert arrived[-1].headers["host"] == f"{TRACK}:{up.port}"  # the name kept in Host
    else:
        assert not arrived
    shop = [x for x in lines if x.get("host") == SHOP][-1]
    assert shop["recipient"] == "first_party" and "cname_cloaked" not in (shop.get("flags") or [])
    assert sorted(dns.questions) == sorted([SHOP, TRACK])  # one question per name: the connection asked none of its own


def test_the_answer_is_cached_for_its_ttl(stack):
    up, px, dns = stack
    n = len(dns.questions)
    with httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60) as c:
        for _ in range(3):
            assert c.get(f"https://{SHOP}:{up.port}/p", headers=_page(up.port)).status_code == 200
    assert len(dns.questions) == n


def test_the_connection_is_verified_for_the_name_not_the_address(stack):
    up, px, dns = stack
    with httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60) as c:
        ok = c.get(f"https://{SHOP}:{up.port}/verified", headers=_page(up.port))
        bad = c.get(f"https://{WRONG}:{up.wrong.port}/pay", headers=_page(up.wrong.port))
    assert ok.status_code == 200 and ok.json()["path"] == "/verified"
    assert up.snis and set(up.snis) <= {SHOP, TRACK} and SHOP in up.snis  # SNI is the name, never 127.0.0.1
    assert bad.status_code == 502, bad.text  # certificate for elsewhere.example: mitmproxy refuses it
    assert up.wrong_snis == [WRONG] and not up.wrong.received  # the handshake was for the name; nothing was sent


def test_under_mitmdump_the_chain_is_read_too(tmp_path):
    """`mitmdump -s` (guardian_proxy/mitm/script.py): the same chain, read once the gateway is built; the request
    itself goes where `guardian_redirect_upstream` sends it (plain HTTP)."""
    from tests.support.mitmdump_process import start_mitm
    from tests.support.upstream import start_upstream

    up = start_upstream()
    dns = DnsServer({TRACK: ["shop.example.eulerian.net", "et5.eulerian.net", "127.0.0.1"]})
    cfg = tmp_path / "guardian.yaml"
    cfg.write_text(f"detector:\n  dns_server: '{dns.addr[0]}:{dns.addr[1]}'\n")
    m = start_mitm(tmp_path, "--set", f"guardian_config={cfg}", "--set", f"guardian_redirect_upstream=127.0.0.1:{up.port}")
    try:
        m.wait_ready()
        body = json.dumps({"email": EMAIL, "event": "checkout"}).encode()
        with httpx.Client(proxy=m.url, timeout=60) as c:
            c.post(f"http://{TRACK}/collect", content=body, headers={
                "origin": f"http://{SHOP}", "referer": f"http://{SHOP}/checkout", "sec-fetch-site": "same-site",
                "sec-fetch-mode": "cors", "content-type": "application/json"})
        line = [x for x in m.log_lines() if x.get("host") == TRACK][-1]
        assert "cname_cloaked" in (line.get("flags") or []) and line["recipient"] == "analytics", line
        assert dns.questions == [TRACK]
        assert all(EMAIL.encode() not in r.body for r in up.received)
    finally:
        m.stop()
        dns.close()
        up.close()
