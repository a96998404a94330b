"""Values split across two requests to one destination are reassembled (guardian_proxy/fragments.py)."""

from __future__ import annotations

import pytest

from guardian_proxy.fragments import FragmentWindow
from guardian_proxy.types import Action, RawRequest, TextField


def _action(domain: str, *values: tuple[str, str], recipient: str = "ad_network") -> Action:
    return Action(domain=domain, host=f"t.{domain}", recipient=recipient,
                  fields=[TextField(path=f"query:{k}", text=v, key=k) for k, v in values])


REQ = RawRequest(method="GET", url="https://t.tracker.example/p", client="127.0.0.1")


@pytest.mark.parametrize("first, second, entity", [
    ("4111 1111", "1111 1111", "CREDIT_CARD"),
    ("411111", "1111111111", "CREDIT_CARD"),
    ("5500 0000 0000", "0004", "CREDIT_CARD"),
    ("536", "221234", "US_SSN"),
    ("53622", "1234", "US_SSN"),
    ("jane.doe@", "example.com", "EMAIL_ADDRESS"),
    ("jane.doe@exa", "mple.com", "EMAIL_ADDRESS"),
    ("jane.doe", "@example.com", "EMAIL_ADDRESS"),
])
def test_the_second_half_carries_the_whole_value(first, second, entity):
    w = FragmentWindow()
    a1 = _action("tracker.example", ("a", first))
    assert w.check(REQ, a1) == [] and not a1.spans
    a2 = _action("tracker.example", ("b", second))
    spans = w.check(REQ, a2)
    assert [s.entity for s in spans] == [entity] and spans[0].path == "query:b"
    assert "fragment_reassembly" in a2.flags and a2.categories


def test_halves_that_make_nothing_valid_pass():
    for first, second in (("4111 1111", "1111 1112"), ("666", "221234"), ("536", "001234"), ("jane.doe", "example.com"),
                          ("page.view", "@home"), ("1717171717", "123456")):
        w = FragmentWindow()
        w.check(REQ, _action("tracker.example", ("a", first)))
        assert w.check(REQ, _action("tracker.example", ("b", second))) == [], (first, second)


def test_everyday_parameters_are_not_fragments():
    w = FragmentWindow()
    seq = [("w", "300"), ("h", "250"), ("ts", "221234"), ("v", "2"), ("cb", "536221"), ("page", "536"),
           ("t", "221234")]
    for k, v in seq:
        assert w.check(REQ, _action("tracker.example", (k, v))) == []


def test_other_destinations_clients_and_the_page_itself_are_apart():
    w = FragmentWindow()
    w.check(REQ, _action("tracker.example", ("a", "4111 1111")))
    assert w.check(REQ, _action("other.example", ("b", "1111 1111"))) == []
    other = RawRequest(method="GET", url="https://t.tracker.example/p", client="10.0.0.9")
    assert w.check(other, _action("tracker.example", ("b", "1111 1111"))) == []
    own = FragmentWindow()
    own.check(REQ, _action("shop.example", ("a", "4111 1111"), recipient="first_party"))
    assert own.check(REQ, _action("shop.example", ("b", "1111 1111"), recipient="first_party")) == []


def test_states_expire_and_are_bounded():
    w = FragmentWindow(window_s=0.0)
    w.check(REQ, _action("tracker.example", ("a", "4111 1111")))
    assert w.check(REQ, _action("tracker.example", ("b", "1111 1111"))) == []
    w = FragmentWindow()
    for i in range(5000):
        w.check(RawRequest(method="GET", url="https://x/", client=str(i)), _action("tracker.example", ("a", "536")))
    assert len(w._windows) <= 4096


def test_through_the_gateway_a_split_card_never_reaches_an_ad_network(gateway):
    first = gateway.evaluate(RawRequest(method="GET", url="https://stats.g.doubleclick.net/p?x1=4111%201111",
                                        client="127.0.0.7"))
    assert first.action == "allow"
    second = gateway.evaluate(RawRequest(method="GET", url="https://stats.g.doubleclick.net/p?x2=1111%201111",
                                         client="127.0.0.7"))
    assert second.action == "deny" and "fragment_reassembly" in second.six.flags
    assert second.six.categories.get("financial")
