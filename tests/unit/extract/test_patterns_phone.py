"""extract/patterns.py PhoneRecognizer: an extension is part of the number ("(555)123-8826x372", "555-123-4567 ext.
89"), and so is a North American number's trunk or international prefix ("001-970-431-0831"); the extension's
digits do not count towards the number's length."""

import pytest

from guardian_proxy.extract.patterns import PhoneRecognizer


def _found(text: str) -> list[str]:
    return sorted({text[a:b] for a, b, _, _ in PhoneRecognizer().find(text)})


@pytest.mark.parametrize("value", ["(555)123-8826x372", "555-123-4567 ext. 89", "001-970-431-0831x9963",
                                   "+1-202-555-0147x1234", "1-800-555-0199", "555.816.3202x850"])
def test_a_number_with_its_extension_or_prefix_is_one_phone(value):
    assert _found(f"Contact {value} for help.") == [value]


def test_a_digit_run_glued_to_letters_or_a_decimal_is_no_phone():
    assert _found("build 555-123-4567x9a and version 1.555.123.4567") == []
