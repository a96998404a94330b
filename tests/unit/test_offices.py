"""Office titles (guardian_proxy/offices.py), shared by the hit filter and the residue scan: an office named by its
title alone is a function; its rare word ("Procurator") is no rare name."""

from guardian_proxy.anonymize.residue import scan
from guardian_proxy.extract.hit_filter import keep
from guardian_proxy.offices import OFFICE_TITLES


def test_office_titles_are_lower_case_words():
    assert {"officer", "procurator", "inspector"} <= OFFICE_TITLES
    assert all(t == t.lower() and " " not in t for t in OFFICE_TITLES)


def test_an_office_title_is_no_span_and_its_rare_word_no_residue():
    text = "the written observations of the Procurator General on his plea of nullity"
    a = text.index("Procurator")
    assert keep(text, (a, a + len("Procurator General"), "ORGANIZATION", 0.85)) is None
    assert [c.value for c in scan(text) if c.kind == "rare"] == []
