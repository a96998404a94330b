"""L3 generalizes an amount to its order of magnitude and keeps its currency, but not a country's adjective before
the currency ("Turkish liras"): a country is generalized at L3, so is the one a currency names (a TAB judgment whose
applicant's nationality is hidden kept "10,000-100,000 Turkish liras")."""

from __future__ import annotations

import pytest

from guardian_proxy.anonymize.generalize import amount


@pytest.mark.parametrize("value,expected", [
    ("12,355.61 Turkish liras (TRY)", "10,000-100,000 liras (TRY)"),
    ("476,970,000 New Turkish Liras", "100,000,000-1,000,000,000 Liras"),
    ("1,500 Austrian schillings (ATS)", "1,000-10,000 schillings (ATS)"),
    ("EUR 5,443.70", "EUR 1,000-10,000"),
    ("about GBP 150", "GBP 100-1,000"),
])
def test_an_amount_keeps_its_magnitude_and_currency_not_the_country(value, expected):
    assert amount(value, 3) == expected


def test_from_l4_an_amount_is_a_tag():
    assert amount("12,355.61 Turkish liras (TRY)", 4) == "[AMOUNT]"
