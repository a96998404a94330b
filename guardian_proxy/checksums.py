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


def nhs_check_digit(body: str) -> int | None:
    """The modulus-11 check digit of an NHS number's first nine digits, or None when no number has this body
    (the remainder gives 10)."""
    check = 11 - sum(int(d) * w for d, w in zip(body, range(10, 1, -1), strict=True)) % 11
    return None if check == 10 else 0 if check == 11 else check


def nhs_number(digits: str) -> bool:
    """Ten digits whose last is the NHS modulus-11 check digit of the first nine."""
    return len(digits) == 10 and digits.isdigit() and nhs_check_digit(digits[:9]) == int(digits[9])
