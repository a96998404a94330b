"""Hits: the hard-rule backstop, known values of the registry, overlaps, write-back."""

from guardian_proxy.checksums import luhn
from guardian_proxy.session.registry import SessionState
from guardian_proxy.session.rewrite import Hit, KnownValues, apply, backstop, like_case, resolve


def test_backstop_ssn_card_account():
    text = ("SSN 536-22-8714, card 4111 1111 1111 1111, bad card 4111 1111 1111 1112, routing no: 021000021, 000-12-3456,"
            " account no: 021000021")
    got = {(h.entity, h.text) for h in backstop(0, text)}
    # a valid ABA routing number after "routing" is a bank's (not blocked); the same digits as an account are blocked
    assert got == {("US_SSN", "536-22-8714"), ("CREDIT_CARD", "4111 1111 1111 1111"), ("US_BANK_NUMBER", "021000021")}
    assert [h.start for h in backstop(0, text) if h.entity == "US_BANK_NUMBER"] == [text.rindex("021000021")]
    assert luhn("79927398713") and not luhn("79927398710")


def test_known_values_find_repeats_and_name_parts():
    s = SessionState(sid="x")
    e = s.add("PERSON", "John Doe", 1)
    s.set_surrogate(e, "Alex Smith")
    s.names.update({"john": "Alex", "doe": "Smith"})
    kv = KnownValues(s, {e.norm})
    hits = kv.find(0, "JOHN DOE's file; John called; johnny and doe stay; Doe's.")
    assert [(h.text, h.part) for h in hits] == [("JOHN DOE", False), ("John", True), ("Doe", True)]


def test_a_rare_name_part_is_found_again_in_lower_case_a_common_word_is_not():
    s = SessionState(sid="x")
    e = s.add("PERSON", "Eilidh Fraser", 1)
    s.set_surrogate(e, "Alex Smith")
    s.names.update({"eilidh": "Alex", "fraser": "Smith"})
    hits = KnownValues(s, {e.norm}).find(0, "cheers eilidh, the fraser valley; Fraser said so")
    assert [(h.text, h.part) for h in hits] == [("eilidh", True), ("Fraser", True)]


def test_resolve_prefers_hard_rule_then_longest_and_apply_escapes_json():
    hits = [Hit(0, 0, 8, "PERSON", "John Doe"), Hit(0, 5, 8, "PERSON", "Doe"), Hit(0, 10, 21, "GOVERNMENT_ID", "x"),
            Hit(0, 10, 21, "US_SSN", "x")]
    chosen = resolve(hits)
    assert [(h.start, h.entity) for h in chosen] == [(0, "PERSON"), (10, "US_SSN")]
    out = apply('{"a": "John Doe"}', [Hit(0, 7, 15, "PERSON", "John Doe")], lambda h: 'Q "x"', json_text=True)
    assert out == '{"a": "Q \\"x\\""}'
    assert like_case("Alex Smith", "JOHN DOE", "John Doe") == "ALEX SMITH"


def test_an_account_number_after_acc_is_blocked():
    from guardian_proxy.session.rewrite import backstop

    assert [h.text for h in backstop(0, "Bank: T Wojcik, sort code 40-47-84, acc 31926608")] == ["31926608"]
