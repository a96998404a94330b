"""CNAME cloaking (R-CNAME-CLOAKED): a first-party name that is a CNAME to a tracker vendor is that vendor.
The chain is read from the DNS answer of a real local DNS server (UDP, RFC 1035 wire format, standard
library)."""

import struct

import pytest

from guardian_proxy.extract import recipients
from guardian_proxy.extract.cname import CnameResolver, cname_chain, hosts_file_names, parse_nameserver
from tests.support.dns_server import DnsServer

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


def test_answer_gives_the_chain_and_the_addresses_the_connection_uses(dns, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n192.0.2.99 pinned.shop-example.com  # a developer's pin\n")
    resolve = CnameResolver(nameserver=dns.addr, timeout=2.0, hosts=hosts_file_names(hosts))
    a = resolve.lookup("metrics.shop-example.com")
    assert (a.canonical, a.addresses) == ("et5.eulerian.net", ("192.0.2.10",)) and a.ttl == 60
    assert resolve.lookup("www.shop-example.com").addresses == ("192.0.2.20",)
    assert resolve.cached("www.shop-example.com") == (True, resolve.lookup("www.shop-example.com"))
    # what the system answers itself is never asked: an address, a name in the hosts file, a name without a dot
    for host in ("192.0.2.7", "[2001:db8::1]", "pinned.shop-example.com", "intranet"):
        assert not resolve.asks(host) and resolve.lookup(host) is None
    assert dns.questions == ["metrics.shop-example.com", "www.shop-example.com"]


def test_nameserver_setting():
    assert parse_nameserver("127.0.0.1:5353") == ("127.0.0.1", 5353)
    assert parse_nameserver("9.9.9.9") == ("9.9.9.9", 53)
    assert parse_nameserver("[::1]:5353") == ("::1", 5353)


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
