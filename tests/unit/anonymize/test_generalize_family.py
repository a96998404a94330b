"""anonymize/generalize.py `family` at L3: a parent's role says the person's own family status ("mom of 2" →
[FAMILY]), a marital status ("single dad" too) is [MARITAL_STATUS], a count of children is dropped and the children
stay ("three kids" → "kids")."""

import pytest

from guardian_proxy.anonymize.generalize import family


@pytest.mark.parametrize(("value", "expected"), [
    ("mom of 2", "[FAMILY]"),
    ("father of three", "[FAMILY]"),
    ("dad to 3 amazing kids", "[FAMILY] to amazing kids"),
    ("single mum", "[MARITAL_STATUS]"),
    ("single", "[MARITAL_STATUS]"),
    ("in a long-distance relationship", "[MARITAL_STATUS]"),
    ("divorced father of 4", "[MARITAL_STATUS]"),
    ("three kids", "kids"),
    ("my two sons", "my sons"),
])
def test_family_at_l3(value, expected):
    assert family(value, 3) == expected


def test_l5_is_a_tag():
    assert family("three kids", 5) == "[FAMILY]"
