"""End to end (issue 25 item 3, CNAME cloaking): a real `guardian-proxy run` whose DNS server is a real local one
(UDP, port 0), a local TLS upstream, and httpx as the page's client.

`track.shop.example` is a CNAME of a listed cloaked tracker vendor (Eulerian, AdGuard's list): the proxy's own DNS
answer says so, and an e-mail the shop's page sends there is handled as the tracker's, not the shop's. The proxy
connects to the address of that same answer (no DNS question of its own: `.example` names resolve nowhere else),
asks once per name (the answer's TTL), and a name without a CNAME is the shop's as before.
"""

import json
import ssl

import httpx
import pytest

from tests.support.dns_server import DnsServer
from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow

SHOP, TRACK = "www.shop.example", "track.shop.example"
EMAIL = "maria.lindqvist@example.com"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    d = tmp_path_factory.mktemp("cname")
    up = start_upstream(tls_dir=d, names=[SHOP, TRACK])
    dns = DnsServer({TRACK: ["shop.example.eulerian.net", "et5.eulerian.net", "127.0.0.1"], SHOP: ["127.0.0.1"]})
    cfg = d / "guardian.yaml"
    cfg.write_text(f"detector:\n  dns_server: '{dns.addr[0]}:{dns.addr[1]}'\n")
    px = start_proxy(d, None, extra=["--config", str(cfg)])  # no --redirect-upstream: the DNS answer decides
    yield up, px, dns
    px.stop()
    dns.close()
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
