"""anonymize/levels.py: at L4 the acronym defined right after a word hidden as residue is hidden with it."""

from guardian_proxy.anonymize.levels import LevelRenderer
from guardian_proxy.anonymize.surrogates import Surrogates
from guardian_proxy.types import TextField


def _l4(text: str) -> str:
    fields = [TextField(path="text:", text=text)]
    return LevelRenderer(fields, [], Surrogates(text, seed=b"t")).render(4).get("text:", text)


def test_the_acronym_of_a_hidden_name_is_hidden_with_it():
    out = _l4("From 1970 she worked as a dancer for the Energiewerke (EWE), a national company.")
    assert "Energiewerke" not in out and "EWE" not in out
    assert "a national company" in out


def test_an_acronym_after_kept_words_stays():
    out = _l4("The application was lodged under the European Convention on Human Rights (ECHR) in 2001.")
    assert "(ECHR)" in out
