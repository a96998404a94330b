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


class Calls:
    """An addon that records its `update` (and optionally raises or halts there)."""

    def __init__(self, name: str, seen: list, fail: type[BaseException] | None = None):
        self.name, self.seen, self.fail = name, seen, fail

    def update(self, flows) -> None:
        self.seen.append(self.name)
        if self.fail is not None:
            raise self.fail("stop")


class Silent:
    """No traffic hook at all."""


class Loader:
    """Children that may change after the index was read (as mitmproxy's script loader's scripts)."""

    def __init__(self):
        self.addons: list = []


def test_an_event_asks_only_the_addons_with_its_hook_and_calls_them_as_mitmproxy_does():
    """`index_hooks`: the same hooks run in the same order as mitmproxy's own `trigger_event`, an error in one is
    logged and the next still runs, `AddonHalt` stops the event; an addon added later, a child added to an addon
    whose children may change, are asked from then on; an addon without the hook is not asked at all."""
    from mitmproxy import exceptions

    from guardian_proxy.mitm.app import QuietAddons, index_hooks

    async def run(indexed: bool) -> tuple[list, list]:
        seen: list = []
        m = master.Master(options.Options())
        try:
            return await events(m, seen, indexed)
        finally:
            m._legacy_log_events.uninstall()  # its log handler posts to this loop, closed after the test

    async def events(m, seen: list, indexed: bool) -> tuple[list, list]:
        loader = Loader()
        chain = [Calls("a", seen), Silent(), GuardianChain([Silent(), Calls("b", seen, ValueError)]),
                 QuietAddons([Silent(), Silent()]), loader, Calls("c", seen)]
        for a in chain:
            m.addons.chain.append(a)
        asked: list = []
        if indexed:
            index = index_hooks(m.addons)
            invoke, invoke_sync = m.addons.invoke_addon, m.addons.invoke_addon_sync

            async def counting(addon, event):
                asked.append(addon)
                await invoke(addon, event)

            def counting_sync(addon, event):
                asked.append(addon)
                invoke_sync(addon, event)

            m.addons.invoke_addon, m.addons.invoke_addon_sync = counting, counting_sync
        event = hooks.UpdateHook([tflow.tflow()])
        await m.addons.trigger_event(event)  # b raises: logged, c still runs
        loader.addons.append(Calls("script", seen))  # a script loaded later
        m.addons.chain.append(Calls("late", seen))  # an addon added later
        await m.addons.trigger_event(event)
        m.addons.trigger(event)  # the synchronous trigger (mitmproxy's log records), the same way
        m.addons.chain.insert(0, Calls("halt", seen, exceptions.AddonHalt))
        await m.addons.trigger_event(event)  # stops after the first addon
        m.addons.trigger(event)
        if indexed:
            assert [type(a).__name__ for a in index.asked("update")] == ["Calls", "Calls", "GuardianChain", "Loader",
                                                                          "Calls", "Calls"]
            assert index.asked("request") == [loader]  # no request hook anywhere but (maybe) in the loader's scripts
        return seen, asked

    async def both():
        return await run(False), await run(True)

    (plain, _), (indexed, asked) = asyncio.run(both())
    assert plain == ["a", "b", "c", "a", "b", "script", "c", "late", "a", "b", "script", "c", "late", "halt", "halt"]
    assert indexed == plain
    assert not any(isinstance(a, (Silent, QuietAddons)) for a in asked)
