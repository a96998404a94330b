"""The shared scratch (guardian_proxy/state/scratch*.py) and the split-value window on it (fragments.py):
two windows built from the same settings are two worker processes (or two gateways of a Redis fleet)."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from guardian_proxy.fragments import FragmentWindow
from guardian_proxy.state import open_scratch, redis_client
from guardian_proxy.types import Action, RawRequest, TextField
from tests.support.state_backends import backend_settings, unreachable_settings

REQ = RawRequest(method="GET", url="https://t.tracker.example/p", client="127.0.0.9")


def _action(domain: str, *values: tuple[str, str], recipient: str = "ad_network") -> Action:
    return Action(domain=domain, host=f"t.{domain}", recipient=recipient,
                  fields=[TextField(path=f"query:{k}", text=v, key=k) for k, v in values])


@pytest.fixture(params=["local", "redis"])
def settings(request, tmp_path):
    return backend_settings(request, request.param, tmp_path)


def test_swap_put_and_expiry(settings):
    a, b = open_scratch(settings, "t"), open_scratch(settings, "t")
    other = open_scratch(settings, "u")
    assert a.swap("k", b"one", 5) is None
    assert b.swap("k", b"two", 5) == b"one"  # another process's write, read at once
    assert other.swap("k", None, 5) is None  # namespaces are apart
    b.put("k", b"three", 5)
    assert a.swap("k", None, 5) == b"three" and b.swap("k", None, 5) is None
    a.put("short", b"x", 0.05)
    time.sleep(0.15)
    assert b.swap("short", b"y", 5) is None  # expired
    for s in (a, b, other):
        s.close()


@pytest.mark.parametrize("first, second, entity", [
    ("4111 1111", "1111 1111", "CREDIT_CARD"),
    ("5500 0000 0000", "0004", "CREDIT_CARD"),
    ("536", "221234", "US_SSN"),
    ("jane.doe@", "example.com", "EMAIL_ADDRESS"),
    ("jane.doe", "@example.com", "EMAIL_ADDRESS"),
])
def test_a_value_split_across_two_windows_of_one_store_is_reassembled(settings, first, second, entity):
    w1, w2 = FragmentWindow(settings), FragmentWindow(settings)
    assert w1.check(REQ, _action("tracker.example", ("a", first))) == []
    a2 = _action("tracker.example", ("b", second))
    spans = w2.check(REQ, a2)
    assert [s.entity for s in spans] == [entity] and spans[0].path == "query:b"
    assert "fragment_reassembly" in a2.flags
    # the completing half's states are not kept: the same second half again pairs with nothing
    assert w1.check(REQ, _action("tracker.example", ("b", second))) == []


def test_only_consecutive_requests_pair_and_other_keys_are_apart(settings):
    w1, w2 = FragmentWindow(settings), FragmentWindow(settings)
    w1.check(REQ, _action("tracker.example", ("a", "4111 1111")))
    w2.check(REQ, _action("tracker.example", ("q", "hello")))  # a request between the halves
    assert w1.check(REQ, _action("tracker.example", ("b", "1111 1111"))) == []
    w1.check(REQ, _action("tracker.example", ("a", "4111 1111")))
    other = RawRequest(method="GET", url="https://t.tracker.example/p", client="10.0.0.9")
    assert w2.check(other, _action("tracker.example", ("b", "1111 1111"))) == []
    assert w2.check(REQ, _action("other.example", ("b", "1111 1111"))) == []
    assert [s.entity for s in w2.check(REQ, _action("tracker.example", ("b", "1111 1111")))] == ["CREDIT_CARD"]


def test_states_past_the_window_do_not_pair(settings):
    w1, w2 = FragmentWindow(settings, window_s=0.05), FragmentWindow(settings, window_s=0.05)
    w1.check(REQ, _action("tracker.example", ("a", "4111 1111")))
    time.sleep(0.15)
    assert w2.check(REQ, _action("tracker.example", ("b", "1111 1111"))) == []


def test_redis_keys_are_hashed_and_hold_no_value(request, tmp_path):
    s = backend_settings(request, "redis", tmp_path)
    FragmentWindow(s).check(REQ, _action("tracker.example", ("a", "jane.doe@")))
    r = redis_client(s)
    keys = list(r.scan_iter(match=s.state.prefix + ":*"))
    assert len(keys) == 1 and 0 < r.pttl(keys[0]) <= 120_000
    raw = keys[0] + r.get(keys[0])
    for secret in (b"jane", b"127.0.0.9", b"tracker"):
        assert secret not in raw


def test_an_unreachable_store_degrades_to_this_process_window_without_waiting_again(tmp_path, caplog):
    w = FragmentWindow(unreachable_settings(tmp_path, timeout_s=0.2))
    start = time.monotonic()
    assert w.check(REQ, _action("tracker.example", ("a", "4111 1111"))) == []
    assert time.monotonic() - start < 3  # one timeout at most, no hang
    start = time.monotonic()
    found = w.check(REQ, _action("tracker.example", ("b", "1111 1111")))  # the completing half, same process
    assert time.monotonic() - start < 0.1  # the dead store is not asked again for a while
    assert [sp.entity for sp in found] == ["CREDIT_CARD"]
    assert sum("does not answer" in r.getMessage() for r in caplog.records) == 1


def _first_half(settings) -> None:
    FragmentWindow(settings).check(REQ, _action("tracker.example", ("a", "4111 1111")))


@pytest.mark.slow
def test_a_split_card_across_two_processes(settings):
    p = multiprocessing.get_context("spawn").Process(target=_first_half, args=(settings,))
    p.start()
    p.join()  # its exit is the event (pytest-timeout bounds a hang), not 60 s of a loaded machine
    assert p.exitcode == 0
    spans = FragmentWindow(settings).check(REQ, _action("tracker.example", ("b", "1111 1111")))
    assert [s.entity for s in spans] == ["CREDIT_CARD"]
