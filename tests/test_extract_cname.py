"""CNAME cloaking (issue 25): a first-party name that is a CNAME to a tracker vendor is that vendor. The chain is
read from the DNS answer of a real local DNS server (UDP, RFC 1035 wire format, standard library)."""

import socket
import struct
import threading

import pytest

from guardian_proxy.extract import recipients
from guardian_proxy.extract.cname import CnameResolver, _name, cname_chain


def _labels(name: str) -> bytes:
    return b"".join(bytes([len(p)]) + p.encode() for p in name.split(".") if p) + b"\x00"


class DnsServer:
    """Answers A questions from `zone` ({name: [cname, cname, …, "1.2.3.4"]}); counts the questions; `silent` never
    answers; a name not in the zone is NXDOMAIN."""

    def __init__(self, zone: dict[str, list[str]], silent: bool = False):
        self.zone, self.silent, self.questions = zone, silent, []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.addr = self.sock.getsockname()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                msg, peer = self.sock.recvfrom(512)
            except TimeoutError:
                continue
            qname, end = _name(msg, 12)
            self.questions.append(qname)
            if self.silent:
                continue
            question = msg[12:end + 4]
            records = self.zone.get(qname)
            answers, owner = b"", b"\xc0\x0c"  # the first owner name points at the question
            for value in records or []:
                if value[0].isdigit():
                    answers += owner + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(value)
                else:
                    rdata = _labels(value)
                    answers += owner + struct.pack(">HHIH", 5, 1, 60, len(rdata)) + rdata
                    owner = _labels(value)
            flags = 0x8180 if records is not None else 0x8183
            n = sum(1 for _ in records or [])
            self.sock.sendto(struct.pack(">HHHHHH", struct.unpack(">H", msg[:2])[0], flags, 1, n, 0, 0)
                             + question + answers, peer)

    def close(self):
        self.stop.set()
        self.thread.join(2)
        self.sock.close()


ZONE = {
    "metrics.shop-example.com": ["shop-example.com.eulerian.net", "et5.eulerian.net", "192.0.2.10"],
    "www.shop-example.com": ["192.0.2.20"],
    "go.shop-example.com": ["shop-example.eulerian.net", "192.0.2.11"],
    "img.shop-example.com": ["d111111abcdef8.cloudfront.net", "192.0.2.30"],
}


@pytest.fixture
def dns():
    server = DnsServer(ZONE)
    yield server
    server.close()


def test_chain_from_a_real_answer_is_followed_and_cached(dns):
    resolve = CnameResolver(nameserver=dns.addr, timeout=2.0)
    assert resolve("metrics.shop-example.com") == "et5.eulerian.net"
    assert resolve("METRICS.shop-example.com.") == "et5.eulerian.net"  # same name: from the cache
    assert resolve("www.shop-example.com") is None  # no CNAME
    assert resolve("nothing.shop-example.com") is None  # NXDOMAIN
    assert dns.questions == ["metrics.shop-example.com", "www.shop-example.com", "nothing.shop-example.com"]


def test_a_silent_server_costs_one_bounded_wait_then_the_cache_answers():
    server = DnsServer(ZONE, silent=True)
    try:
        resolve = CnameResolver(nameserver=server.addr, timeout=0.2)
        assert resolve("metrics.shop-example.com") is None
        assert resolve("metrics.shop-example.com") is None
        assert server.questions == ["metrics.shop-example.com"]  # the failure is cached (30 s)
    finally:
        server.close()


def test_cache_is_bounded(dns):
    resolve = CnameResolver(nameserver=dns.addr, timeout=2.0, max_entries=2)
    for host in ("a.shop-example.com", "b.shop-example.com", "c.shop-example.com"):
        resolve(host)
    assert len(resolve._cache) == 2


def test_parse_refuses_loops_and_wrong_ids():
    loop = struct.pack(">HHHHHH", 7, 0x8180, 0, 1, 0, 0) + b"\xc0\x0c" + struct.pack(">HHIH", 5, 1, 60, 2) + b"\xc0\x0c"
    with pytest.raises(ValueError):
        cname_chain(loop)
    assert cname_chain(loop, qid=8) == {}


def test_cloaked_first_party_name_is_its_vendor_and_a_cdn_is_not(dns):
    resolve = CnameResolver(nameserver=dns.addr, timeout=2.0)
    r = recipients.classify("metrics.shop-example.com", "shop-example.com", resolve_cname=resolve)
    assert (r.cls, r.rule, r.flags) == ("analytics", "cname-cloaked", ["cname_cloaked"]) and r.owner
    assert recipients.classify("img.shop-example.com", "shop-example.com", resolve_cname=resolve).cls == "first_party"
    assert recipients.classify("www.shop-example.com", "shop-example.com", resolve_cname=resolve).cls == "first_party"
    # the user's own client addressing the cloaked name: the vendor too
    r = recipients.classify("go.shop-example.com", None, resolve_cname=resolve, addressed=True)
    assert r.cls == "analytics" and "cname_cloaked" in r.flags


@pytest.mark.slow
def test_email_to_a_cloaked_name_is_not_sent_as_first_party(gateway, dns):
    """A marketing vendor served under the shop's own name received the user's e-mail as "first party"."""
    import json

    from guardian_proxy.types import RawRequest

    page = [("origin", "https://www.shop-example.com"), ("referer", "https://www.shop-example.com/checkout"),
            ("sec-fetch-site", "same-site"), ("sec-fetch-mode", "cors"), ("sec-fetch-dest", "empty"),
            ("content-type", "application/json")]
    body = json.dumps({"email": "maria.lindqvist@example.com", "event": "checkout"}).encode()
    ext, saved = gateway.extractor, gateway.extractor.resolve_cname
    ext.resolve_cname = CnameResolver(nameserver=dns.addr, timeout=2.0)
    try:
        d = gateway.evaluate(RawRequest(method="POST", url="https://metrics.shop-example.com/collect", headers=page,
                                        body=body), log=False)
        assert d.six.recipient == "analytics" and "cname_cloaked" in d.six.flags
        assert d.action == "deny" or b"maria.lindqvist" not in d.rewrite.body
        # nothing personal: no DNS question at all (a page load's requests never wait on it)
        n = len(dns.questions)
        gateway.evaluate(RawRequest(method="GET", url="https://img.shop-example.com/logo.png", headers=page[:5]),
                         log=False)
        assert len(dns.questions) == n
    finally:
        ext.resolve_cname = saved
