"""The proxy's own DNS answer (guardian_proxy/dns_answer.py, R-CNAME-CLOAKED): the chain is read by default,
the connection goes to the answered address only with `detector.dns_connect`, and a name whose answered
address refused is connected through the system resolver afterwards. A real local DNS server; mitmproxy's own
test flows."""

import asyncio

import pytest
from mitmproxy.connection import Server
from mitmproxy.proxy.server_hooks import ServerConnectionHookData
from mitmproxy.test import tflow

from guardian_proxy.config import DetectorSettings
from guardian_proxy.dns_answer import META, DnsAnswer
from guardian_proxy.extract.cname import CnameResolver
from tests.support.dns_server import DnsServer

NAME = "track.shop.example"


@pytest.fixture
def dns():
    server = DnsServer({NAME: ["shop.example.eulerian.net", "192.0.2.7"]})
    yield server
    server.close()


def _flow(host: str = NAME):
    f = tflow.tflow()
    f.request.host, f.request.port, f.request.scheme = host, 443, "https"
    f.request.headers["host"] = host
    return f


def _answered(addon: DnsAnswer, f) -> None:
    asyncio.run(addon.requestheaders(f))


def test_the_default_reads_the_chain_and_leaves_the_connection_to_the_system(dns):
    assert DetectorSettings().cname_lookup is True and DetectorSettings().dns_connect is False
    addon = DnsAnswer(CnameResolver(dns.addr, timeout=2.0, hosts=frozenset()))
    assert addon.connect is False
    f = _flow()
    _answered(addon, f)
    assert f.metadata[META] == {"host": NAME, "canonical": "shop.example.eulerian.net",
                                "address": "192.0.2.7"}
    addon.request(f)
    assert f.request.host == NAME and f.request.headers["host"] == NAME  # the system resolves it, as without us
    addon.done()


def test_dns_connect_sends_to_the_answer_and_a_refused_address_goes_back_to_the_system(dns):
    addon = DnsAnswer(CnameResolver(dns.addr, timeout=2.0, hosts=frozenset()), connect=True)
    f = _flow()
    _answered(addon, f)
    addon.request(f)
    assert f.request.host == "192.0.2.7" and f.request.headers["host"] == NAME  # the name kept in Host
    server = Server(address=("192.0.2.7", 443), tls=True)
    data = ServerConnectionHookData(server=server, client=f.client_conn)
    addon.server_connect(data)
    assert server.sni == NAME  # TLS (and its certificate check) is for the name
    addon.server_connect_error(data)  # that address refused
    g = _flow()
    _answered(addon, g)
    addon.request(g)
    assert g.request.host == NAME  # from now on through the system resolver
    assert dns.questions == [NAME]  # still one question: the chain comes from the cache
    h = _flow("pay.shop.example")  # another name the same client would send to the same address
    h.client_conn = g.client_conn
    h.metadata[META] = {"host": "pay.shop.example", "canonical": None, "address": "192.0.2.8"}
    addon._sni[(h.client_conn.id, ("192.0.2.8", 443))] = "www.shop.example"
    addon.request(h)
    assert h.request.host == "pay.shop.example"  # never onto a connection whose certificate was for another name
    other = DnsAnswer(CnameResolver(dns.addr, timeout=2.0, hosts=frozenset()), connect=True)
    other.server_connect_error(ServerConnectionHookData(server=Server(address=("192.0.2.9", 443)),
                                                        client=f.client_conn))
    assert not other._system  # a failure to an address we did not choose changes nothing
    addon.done()
    other.done()
