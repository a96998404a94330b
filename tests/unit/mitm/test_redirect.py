"""The upstream redirect is an addon of its own in the chain, after the guardian: it sends what the guardian let
through to one address (Host, authority and SNI keep the name) and leaves a blocked request and a refused
connection alone."""

from mitmproxy.proxy import server_hooks
from mitmproxy.test import taddons, tflow

from guardian_proxy.mitm.app import build
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.mitm.redirect import UpstreamRedirect
from guardian_proxy.testing import FakeGateway, decision, run_hook

ADDRESS = ("127.0.0.1", 9)


def _through_chain(gw: FakeGateway, f) -> None:
    """The guardian's hook, then the redirect's, as mitmproxy calls them in chain order."""
    upstream = UpstreamRedirect(ADDRESS)
    guardian = GuardianAddon(gw, upstream)
    run_hook(guardian, "request", f)
    run_hook(upstream, "request", f)
    guardian.done()


def test_an_allowed_request_goes_to_the_address_and_keeps_its_name():
    with taddons.context():
        f = tflow.tflow()
        f.request.host, f.request.headers["host"] = "tracker.example", "tracker.example"
        _through_chain(FakeGateway(decision("allow")), f)
        assert (f.request.host, f.request.port) == ADDRESS
        assert f.request.headers["host"] == "tracker.example"
        assert f.metadata["guardian_url"].startswith("http://tracker.example")  # the URL decided on


def test_a_blocked_request_is_left_alone():
    with taddons.context():
        f = tflow.tflow()
        f.request.host = "tracker.example"
        _through_chain(FakeGateway(decision("deny")), f)
        assert f.response.status_code == 403 and f.request.host == "tracker.example"
        assert "guardian_url" not in f.metadata


def test_server_connect_keeps_the_sni_and_leaves_a_refused_connection():
    up = UpstreamRedirect(ADDRESS)
    f = tflow.tflow()
    f.request.host = "www.example.org"
    up.request(f)
    data = server_hooks.ServerConnectionHookData(server=f.server_conn, client=f.client_conn)
    data.server.tls = True
    up.server_connect(data)
    assert data.server.address == ADDRESS and data.server.sni == "www.example.org"
    refused = tflow.tflow()
    other = server_hooks.ServerConnectionHookData(server=refused.server_conn, client=refused.client_conn)
    before = other.server.address
    other.server.error = "blocked by guardian-proxy"
    up.server_connect(other)
    assert other.server.address == before
    up.client_disconnected(f.client_conn)
    assert up._sni == {}


def test_off_without_an_address():
    up = UpstreamRedirect()
    f = tflow.tflow()
    before = (f.request.host, f.request.port)
    up.request(f)
    assert (f.request.host, f.request.port) == before


def test_the_guardian_sets_the_redirect_from_its_option():
    addon = GuardianAddon()
    with taddons.context(addon) as tctx:
        assert addon.redirect is None
        tctx.configure(addon, guardian_redirect_upstream="127.0.0.1:9")
        assert addon.redirect is addon.upstream and addon.upstream.address == ADDRESS
    addon.done()


def test_one_chain_for_every_launcher():
    """The script's chain (no gateway) and `guardian-proxy run`'s share their order; the redirect follows the
    guardian and is the very addon the guardian configures."""
    chain = build()
    names = [type(a).__name__ for a in chain]
    assert names == ["AppLookup", "GuardianAddon", "UpstreamRedirect", "ScriptDnsAnswer", "ConnectionGuard"]
    assert chain[1].upstream is chain[2] and chain[1].standalone
    chain[1].done()
