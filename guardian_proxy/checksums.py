"""Checksums and number rules shared by the extractor's recognizers and the session's backstop."""

from __future__ import annotations


def luhn_sum(digits: str, last_doubled: bool = False) -> int:
    """The Luhn sum of a string of digits, its last digit doubled or not (a run that ends inside a longer number
    sits at either parity: guardian_proxy/fragments.py keeps both sums of a half)."""
    total, alt = 0, last_doubled
    for c in reversed(digits):
        d = ord(c) - 48
        if alt:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
        alt = not alt
    return total


def luhn(digits: str) -> bool:
    """The Luhn check of a string of digits (payment cards)."""
    return luhn_sum(digits) % 10 == 0


def card_number(digits: str) -> bool:
    """13–19 digits that pass Luhn and are not one digit repeated."""
    return 13 <= len(digits) <= 19 and luhn(digits) and len(set(digits)) > 1
