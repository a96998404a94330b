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


# ------------------------------------------------------------------ values joined in one string (R-FRAGMENTS)

#: one string carrying several halves, then the other halves in the same places: an e-mail, a card, an SSN
JOINED = [
    ("|", "jane.doe@|41111111|536-22", "example.com|11111111|1234"),
    (",", "jane.doe@,41111111,536-22", "example.com,11111111,1234"),
    (";", "jane.doe@; 41111111; 536-22", "example.com; 11111111; 1234"),
    ("&", "jane.doe@&41111111&536-22", "example.com&11111111&1234"),
    ("json", '["jane.doe@", "41111111", "536-22"]', '["example.com", "11111111", "1234"]'),
    ("space", "jane.doe@ 41111111 536-22", "example.com 11111111 1234"),
    ("tab", "jane.doe@\t41111111\t536-22", "example.com\t11111111\t1234"),
    ("newline", "jane.doe@\n41111111\n536-22\n", "example.com\n11111111\n1234\n"),
]


def test_the_issues_example_a_string_of_halves_then_the_rest():
    """`user@|12345678|123-45` then `domain|12345678|6789` (R-FRAGMENTS): 123-45-6789 is an SSN;
    1234567812345678 fails Luhn and `user@domain` has no top-level domain, so those two are not values."""
    w = FragmentWindow()
    assert w.check(REQ, _action("tracker.example", ("d", "user@|12345678|123-45"))) == []
    a2 = _action("tracker.example", ("d", "domain|12345678|6789"))
    spans = w.check(REQ, a2)
    assert [(s.entity, a2.fields[0].text[s.start:s.end]) for s in spans] == [("US_SSN", "6789")]
    assert "fragment_reassembly" in a2.flags and a2.categories.get("government_id")


@pytest.mark.parametrize("sep, first, second", JOINED, ids=[j[0] for j in JOINED])
def test_halves_joined_in_one_string_are_reassembled_whatever_the_separator(sep, first, second):
    w = FragmentWindow()
    assert w.check(REQ, _action("tracker.example", ("d", first))) == []
    a2 = _action("tracker.example", ("d", second))
    spans = w.check(REQ, a2)
    got = {s.entity: a2.fields[0].text[s.start:s.end] for s in spans}
    assert got == {"EMAIL_ADDRESS": "example.com", "CREDIT_CARD": "11111111", "US_SSN": "1234"}, (sep, got)


def test_a_json_array_body_splits_into_fields_that_pair_as_before():
    w = FragmentWindow()
    first = Action(domain="tracker.example", host="t.tracker.example", recipient="ad_network", fields=[
        TextField(path=f"json:$.parts[{i}]", text=v, key="parts") for i, v in enumerate(["jane.doe@", "41111111", "536-22"])])
    w.check(REQ, first)
    second = Action(domain="tracker.example", host="t.tracker.example", recipient="ad_network", fields=[
        TextField(path=f"json:$.parts[{i}]", text=v, key="parts") for i, v in enumerate(["example.com", "11111111", "1234"])])
    assert {s.entity for s in w.check(REQ, second)} == {"EMAIL_ADDRESS", "CREDIT_CARD", "US_SSN"}


def test_pieces_pair_only_in_the_same_place_and_ordinary_strings_do_not_join():
    for first, second in (("41111111|x|y", "a|b|11111111"),  # the halves in different places
                          ("41111111|536-22", "x|11111111|1234"),  # a string with another number of pieces
                          ("jane.doe@|x", "y|example.com")):
        w = FragmentWindow()
        w.check(REQ, _action("tracker.example", ("d", first)))
        assert w.check(REQ, _action("tracker.example", ("d", second))) == [], (first, second)
    ordinary = [("ids", "53622,41111111,20240115"), ("ids", "11111111,1234,99"),  # a list of ids, then another
                ("dims", "1920x1080|1080|1920"), ("dims", "1366x768|768|1366"),
                ("tags", "home;sale;shoes"), ("tags", "home;sale;boots"),
                ("q", "size 42 width 1080"), ("q", "size 43 width 1920"),
                ("screen_width", "53622|1920"), ("screen_width", "1234|1080")]
    w = FragmentWindow()
    pairs = [w.check(REQ, _action("tracker.example", kv)) for kv in ordinary]
    assert pairs[1] == [] and all(p == [] for p in pairs[2:]), pairs


def test_measurement_keys_never_hold_fragments():
    for k1, k2 in (("screen_width", "screen_height"), ("dsp__windowWidth", "u_h"), ("event_index", "local_time"),
                   ("blur_time_ms", "completion_duration_ms")):
        w = FragmentWindow()
        w.check(REQ, _action("tracker.example", (k1, "53622")))
        assert w.check(REQ, _action("tracker.example", (k2, "1234"))) == [], (k1, k2)


def test_the_shared_store_keeps_the_places_of_the_pieces(tmp_path):
    from guardian_proxy.config import load_settings

    w = FragmentWindow(load_settings(state_dir=tmp_path / "state"))
    w.check(REQ, _action("tracker.example", ("d", "jane.doe@|41111111|536-22")))
    other = FragmentWindow(load_settings(state_dir=tmp_path / "state"))  # another worker process
    spans = other.check(REQ, _action("tracker.example", ("d", "example.com|11111111|1234")))
    assert {s.entity for s in spans} == {"EMAIL_ADDRESS", "CREDIT_CARD", "US_SSN"}


def test_everyday_captures_make_no_joins_from_joined_strings():
    """The real captures (../shared/data/realtraffic/har) through the window in order, each request with its own
    recipient: no join comes from a piece of a joined string, and the few chance joins of whole numbers left are on
    trackers or analytics endpoints (16 before the measurement-key rule, 4 after)."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if not (root.parent / "shared" / "data" / "realtraffic" / "har").is_dir():
        pytest.skip("../shared/data/realtraffic is absent")
    sys.path.insert(0, str(root / "scripts"))
    import bench_replay

    from guardian_proxy.extract.detector import Detector
    from guardian_proxy.extract.extractor import Extractor

    ex, w = Extractor(Detector(ner=False)), FragmentWindow()
    n, joins = 0, []
    for path in bench_replay.captures(True, False, None):
        for item in bench_replay.load_har(path):
            if item.error:
                continue
            try:
                a = ex.extract(item.raw)
            except Exception:
                continue
            n += 1
            fields = {f.path: f.text for f in a.fields}
            joins += [(a.recipient, item.host, sp.path, sp.start, len(fields.get(sp.path, "").strip()) - sp.end)
                      for sp in w.check(item.raw, a)]
    assert n > 1000
    assert all(start == 0 and rest <= 0 for _, _, _, start, rest in joins), joins  # whole fields only
    assert len(joins) <= 4, joins


@pytest.mark.slow
def test_e2e_a_string_of_halves_then_the_rest_never_reaches_a_tracker(tmp_path):
    """Through a real proxy: the second request completes three values (e-mail, card, SSN) and is blocked; its
    decision says `fragment_reassembly`; the upstream never sees it."""
    from urllib.parse import quote

    import httpx

    from tests.support.hostile import write_config
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--config", str(write_config(tmp_path))])
    try:
        with httpx.Client(proxy=px.url, timeout=60, trust_env=False) as c:
            for sep in ("|", ";", " "):
                first = c.get(f"http://stats.g.doubleclick.net/p?d={quote(sep.join(['jane.doe@', '41111111', '536-22']))}")
                second = c.get(f"http://stats.g.doubleclick.net/p?d={quote(sep.join(['example.com', '11111111', '1234']))}")
                assert second.status_code in (204, 403), (sep, second.status_code)
                assert first.status_code in (200, 204, 403)
    finally:
        px.stop()
        up.close()
    lines = [x for x in px.log_lines() if x["host"] == "stats.g.doubleclick.net"]
    assert len(lines) == 6
    seconds = lines[1::2]
    assert all("fragment_reassembly" in x["flags"] and x["action"] == "deny" for x in seconds), seconds
    assert all({"financial", "contact"} <= set(x["categories"]) for x in seconds), seconds
    assert not any("11111111" in r.path or "example.com" in r.path for r in up.received)
