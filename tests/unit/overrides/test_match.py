"""Which user override applies to an action: the last match wins, a domain covers its subdomains."""

import pytest

from guardian_proxy.config import Override
from guardian_proxy.overrides import find_override
from guardian_proxy.types import Action


def act(**kw):
    base = dict(domain="x.com", host="x.com", categories={"financial": 1}, recipient="ad_network",
                purposes=["profiling"], basis="background")
    base.update(kw)
    return Action(**base)


def test_overrides_last_match_wins():
    a = act()
    o = [Override(action="deny", domain="x.com"), Override(action="allow", domain="x.com", category="financial")]
    assert find_override(o, a).action == "allow"
    assert find_override(o, act(categories={"contact": 1})).action == "deny"
    assert find_override(o, act(domain="y.com", host="y.com")) is None
    sub = act(host="api.x.com")
    assert find_override([Override(action="deny", domain="x.com")], sub) is not None  # registrable domain
    assert find_override([Override(action="deny", domain="www.x.com")], sub) is None  # exact host only
    assert find_override([Override(action="level", owner="Meta", level=4)], act(owner="meta")).level == 4
    assert find_override([Override(action="deny", recipient="data_broker")], act()) is None
    with pytest.raises(ValueError):
        Override(action="allow")
