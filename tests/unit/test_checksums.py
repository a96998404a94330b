"""guardian_proxy/checksums.py: the number rules shared by the recognizers and the stand-ins."""

from guardian_proxy.checksums import card_number, nhs_check_digit, nhs_number


def test_the_nhs_modulus_11_check():
    assert nhs_number("9434765919")  # the NHS's own published example
    assert not nhs_number("9434765918") and not nhs_number("943476591") and not nhs_number("94347659x9")
    assert nhs_check_digit("943476591") == 9
    # a body whose remainder gives 10 has no number at all
    assert any(nhs_check_digit(f"{n:09d}") is None for n in range(100))


def test_a_card_number():
    assert card_number("4111111111111111") and not card_number("4111111111111112") and not card_number("0" * 16)
