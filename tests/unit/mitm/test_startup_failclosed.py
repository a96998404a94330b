"""The start-up rules of the addon loaded by mitmproxy itself (docs/mitmproxy-addon.md), in mitmproxy's test
context: a bad
`guardian_*` value, lazy upstream connections, the loopback rule, requests that wait for the gateway. The same
through real mitmdump/mitmweb processes: tests/test_e2e_mitmdump_failclosed.py."""

from __future__ import annotations

import asyncio

import pytest
from mitmproxy import exceptions, hooks
from mitmproxy.addons import proxyauth, proxyserver
from mitmproxy.test import taddons, tflow

from guardian_proxy.mitm import startup as addon_module
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.mitm.options import GuardianOptionsError, listen_rule, option_problem


@pytest.mark.parametrize(("name", "value", "ok"), [
    ("guardian_workers", ["abc"], False), ("guardian_workers", ["-1"], False), ("guardian_workers", ["257"], False),
    ("guardian_workers", ["0"], True), ("guardian_workers", [], True), ("guardian_workers", None, True),
    ("guardian_workers", 4, True), ("guardian_dashboard_port", ["http"], False),
    ("guardian_dashboard_port", ["70000"], False), ("guardian_dashboard_port", 0, True),
    ("guardian_dashboard_port", ["1", "2"], False), ("guardian_allow_remote", ["maybe"], False),
    ("guardian_allow_remote", ["true"], True), ("guardian_allow_remote", True, True),
    ("guardian_config", ["x.yaml"], True)])
def test_option_values(name, value, ok):
    why = option_problem(name, value)
    assert (why is None) == ok
    if why:
        assert why.startswith(name) and "\n" not in why


def test_listen_rule():
    assert listen_rule(["regular"], "", 8080, False, None) == ("127.0.0.1", None)  # mitmproxy's default → loopback
    assert listen_rule(["regular"], "127.0.0.1", 8080, False, None) == (None, None)
    assert listen_rule(["regular"], "", 8080, True, "u:p") == (None, None)  # both permissions: every interface
    host, why = listen_rule(["regular"], "0.0.0.0", 8080, False, None)
    assert host is None and "0.0.0.0:8080" in why and "guardian_allow_remote" in why and "--proxyauth" in why
    host, why = listen_rule(["socks5@0.0.0.0:1080"], "", 8080, False, None)  # a mode's own address is the user's
    assert host is None and "0.0.0.0:1080" in why
    assert "proxy authentication" in listen_rule(["regular"], "10.0.0.1", 8080, True, None)[1]
    assert listen_rule(["wireguard@0.0.0.0:51820"], "", 8080, True, None) == (None, None)  # peers have keys
    assert listen_rule(["local"], "", 8080, False, None) == (None, None)  # no socket


def test_start_up_makes_connections_lazy_and_listening_loopback():
    addon = GuardianAddon()
    with taddons.context(proxyserver.Proxyserver(), proxyauth.ProxyAuth(), addon) as tctx:
        tctx.configure(addon, connection_strategy="eager", listen_host="")
        assert tctx.options.connection_strategy == "lazy" and tctx.options.listen_host == "127.0.0.1"
        with pytest.raises(exceptions.OptionsError, match="guardian_allow_remote"):
            tctx.configure(addon, listen_host="0.0.0.0")
        tctx.configure(addon, listen_host="0.0.0.0", guardian_allow_remote=True, proxyauth="u:p")
        assert tctx.options.listen_host == "0.0.0.0"
        addon._running = True  # once running, eager is refused (mitmproxy keeps the old value)
        with pytest.raises(GuardianOptionsError, match="connection_strategy=lazy"):
            tctx.configure(addon, connection_strategy="eager")
        assert tctx.options.connection_strategy == "lazy"
    addon.done()


def test_the_run_addon_is_lazy_too():
    """`guardian-proxy run` hands in its gateway: the listen rule is run's own, lazy connections hold the same."""
    addon = GuardianAddon(gateway=object())
    with taddons.context(proxyserver.Proxyserver(), addon) as tctx:
        tctx.configure(addon, connection_strategy="eager")
        assert tctx.options.connection_strategy == "lazy"
    addon.pool.shutdown()
    addon.evaluator.big_pool.shutdown()


def test_a_bad_deferred_value_is_taken_out_and_said_by_configure():
    """`mitmdump --set guardian_workers=abc`: mitmproxy defers the value until the script declares the option and
    then fails converting it, which aborted the script's loading silently. The addon takes it out in `load` and
    `configure` says it; nothing passes meanwhile."""
    addon = GuardianAddon()
    with taddons.context() as tctx:
        tctx.options.set("guardian_workers=abc", defer=True)
        tctx.master.addons.register(addon)  # load: would raise OptionsError("Not an integer: abc") in process_deferred
        assert "guardian_workers" not in tctx.options.deferred
        with pytest.raises(GuardianOptionsError, match="guardian_workers=abc"):
            tctx.master.addons.invoke_addon_sync(addon, hooks.ConfigureHook(set(tctx.options.keys())))
        assert addon.fatal and "guardian_workers=abc" in addon.fatal
        f = tflow.tflow()
        asyncio.run(addon.request(f))
        assert f.response is not None and f.response.status_code == 503
    addon.done()


def test_a_request_waits_for_the_gateway_and_is_refused_if_it_never_comes(monkeypatch):
    monkeypatch.setattr(addon_module, "READY_WAIT_S", 30)
    addon = GuardianAddon()

    async def scenario():
        f = tflow.tflow()
        waiting = asyncio.create_task(addon.request(f))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # waits, does not pass
        addon._fail("guardian-proxy cannot start: test")  # the build failed: the waiting request is refused
        await asyncio.wait_for(waiting, 5)
        return f

    f = asyncio.run(scenario())
    assert f.response is not None and f.response.status_code == 503
    addon.done()
