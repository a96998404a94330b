"""The list of public people and characters: whole names in any case and accent, mononyms, a surname only public
people carry; not a common surname alone, nor a private name."""

from guardian_proxy.public_people import _names, key, public


def test_public_names_are_found_whole_in_any_case_and_accent():
    names, surnames = _names()
    assert len(names) > 5000
    for v in ("Bukayo Saka", "bukayo saka", "Hermione Granger", "Pele", "Pelé", "Beyoncé's", "Mr Darcy", "Springsteen"):
        assert public(v), v
    assert key("  Pelé’s ") == "pele"


def test_private_names_and_common_surnames_alone_are_not():
    for v in ("Mei Ling Tan", "Tomasz Wierzbicki", "Khan", "Murphy", "Smith", "Kofi", "Emre", ""):
        assert not public(v), v
