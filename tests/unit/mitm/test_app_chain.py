"""`guardian-proxy run`'s addons as one addon of mitmproxy's chain (guardian_proxy/mitm/app.py `GuardianChain`): each
child is registered by its own name and gets every event, in `build`'s order."""

from __future__ import annotations

import asyncio

from mitmproxy import hooks, master, options
from mitmproxy.test import tflow

from guardian_proxy.mitm.app import GuardianChain, build


class Seen:
    def __init__(self, name: str, seen: list):
        self.name, self.seen = name, seen

    def update(self, flows) -> None:
        self.seen.append(self.name)


def test_the_children_get_every_event_in_order_and_keep_their_names():
    async def go():
        m = master.Master(options.Options())
        chain = build()
        m.addons.add(GuardianChain(chain))
        try:
            assert m.addons.get("guardianaddon") is chain[1] and m.addons.get("applookup") is chain[0]
            assert "guardian_state_dir" in m.options  # the children's options were loaded
            seen: list = []
            other = master.Master(options.Options())
            other.addons.add(GuardianChain([Seen("first", seen), Seen("second", seen)]))
            await other.addons.trigger_event(hooks.UpdateHook([tflow.tflow()]))
            assert seen == ["first", "second"]
        finally:
            chain[1].done()

    asyncio.run(go())


def test_mitmproxys_hookless_addons_are_called_once_per_event_in_the_same_order():
    """`quiet_runs`: runs of mitmproxy's addons that have only lifecycle hooks become one addon of the chain; every
    addon keeps its place in the order of hooks, and every one with a traffic hook stays in the chain itself."""
    from mitmproxy.addonmanager import traverse
    from mitmproxy.tools.dump import DumpMaster

    from guardian_proxy.mitm.app import QuietAddons, quiet_runs

    async def go():
        m = DumpMaster(options.Options(), with_termlog=True, with_dumper=False)
        before = list(traverse(m.addons.chain))
        after = quiet_runs(m.addons.chain)
        assert [a for a in traverse(after) if not isinstance(a, QuietAddons)] == before
        assert len(after) < len(m.addons.chain) - 5
        groups = [a for a in after if isinstance(a, QuietAddons)]
        named = {type(c).__name__ for g in groups for c in g.addons}
        assert {"Core", "Cut", "Export", "ErrorCheck"} & named >= {"Core", "Cut", "ErrorCheck"}
        traffic = [n for n in hooks.all_hooks if n not in ("load", "configure", "running", "done")]
        assert not any(callable(getattr(c, n, None)) for g in groups for c in g.addons for n in traffic)
        assert m.addons.get("proxyserver") in after and m.addons.get("core") is not None
        seen: list = []
        lone = [Seen("a", seen), Seen("b", seen)]  # an update hook each: not quiet
        assert quiet_runs(lone) == lone

    asyncio.run(go())
