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
