"""A law's name or a legal term glossed in its own language ("the Motor Vehicles Act (Kraftfahrgesetz)", "a partial
judgment (wyrok częściowy)") says what the English words before it say: no residue while those words stay; hidden
with them when they are hidden (anonymize/residue.py). A named body's gloss and an acronym stay cues."""

from __future__ import annotations

import pytest

from guardian_proxy.anonymize.residue import scan


def _rare(text: str, skip=None) -> list[str]:
    return [c.value for c in scan(text, skip=skip) if c.kind.startswith("rare")]


@pytest.mark.parametrize("text", [
    "pursuant to section 103 (2) of the Motor Vehicles Act 1967 (Kraftfahrgesetz). The Court",
    "On 22 February 2004 it gave a partial judgment (wyrok częściowy). The proceedings",
    "The applicant filed an objection (Einspruch) against the order.",
    "under Article 23(1)(a) of the Immigration Regulation (Utlendingsforskriften) but",
])
def test_a_glossed_term_that_stays_is_no_residue(text):
    assert _rare(text) == []


def test_a_glossed_term_that_is_hidden_hides_its_gloss():
    text = "under the Military Service Act (Wehrgesetz) he was"
    span = (text.index("Military"), text.index(" (Wehrgesetz"))
    assert _rare(text, skip=[span]) == ["Wehrgesetz"]


def test_a_named_bodys_gloss_and_an_acronym_stay_cues():
    assert "Sąd" in _rare("the Gdańsk Court of Appeal (Sąd Apelacyjny) confirmed")
    assert "COTOREP" in _rare("the board gave its decision (COTOREP) in 1996")


@pytest.mark.parametrize("text", [
    "as a system of compensation (dualer Familienlastenausgleich). The applicant",
    "requesting additional compensation (munzam zarar) for the damage",
])
def test_a_lower_case_term_glossed_in_a_phrase_of_another_language_is_no_residue(text):
    assert _rare(text) == []


@pytest.mark.parametrize("text,cue", [
    ("the contractor (Wojciechowski) was paid", "Wojciechowski"),  # one capitalised word may be a name
    ("an inadmissible special levy (Sonderabgabe). The", "Sonderabgabe"),
    ("his neighbour (Kowalski Nowak) came", "Nowak"),
])
def test_a_capitalised_word_in_parentheses_after_a_common_noun_stays_a_cue(text, cue):
    assert cue in _rare(text)


def test_one_letter_is_no_rare_word():
    assert _rare("in response to X’s refutation, the applicant") == []
    assert _rare("in response to Xiaoming’s refutation") == ["Xiaoming’s"]
