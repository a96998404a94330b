"""The list of well-known organisations, brands, products and works: whole names in any case, a leading "the" and
a possessive aside; short acronyms only as written."""

from guardian_proxy.public_orgs import _names, public_org


def test_listed_names_are_found_whole():
    names, acronyms = _names()
    assert len(names) > 5000
    for v in ("Medicare", "medicare", "WhatsApp", "Deutsche Bahn", "Mario Kart", "the Catholic Church", "Ryanair's",
              "Pride and Prejudice", "NHS"):
        assert public_org(v), v


def test_acronyms_only_as_written_and_no_private_names():
    assert public_org("ICE") and not public_org("ice") and not public_org("Ice") and public_org("EE")
    for v in ("Harbour Foods Ltd", "Tomasz Wierzbicki", "Mercy Hospital", "ibuprofen", ""):
        assert not public_org(v), v
