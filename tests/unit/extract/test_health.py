"""extract/health.py: a context phrase finds a condition or a drug only in its medical sense."""

from __future__ import annotations

import pytest

from guardian_proxy.extract.health import find


def _found(text: str) -> set[tuple[str, str]]:
    return {(lab, text[a:b]) for a, b, lab, _ in find(text)}


@pytest.mark.parametrize("text", [
    "within the 60-day period prescribed by domestic law.",          # a rule's requirement, not a prescription
    "to revoke the ten-year period prescribed in section 11 of the 1998 Act.",
    "the requirements of the post as prescribed under Article 48 of Law no. 657.",
    "lodged outside the prescribed time-limit.",                      # the adjective after a determiner
    "within the prescribed period of three months",
    "the matter was treated for as long as the law allowed",
])
def test_a_legal_or_procedural_phrase_is_no_condition(text):
    assert not {v for lab, v in _found(text) if lab in ("MEDICAL_CONDITION", "MEDICATION")}


@pytest.mark.parametrize("text,value", [
    ("My doctor prescribed sleeping pills last month.", "sleeping pills"),
    ("She was prescribed steroid cream for the rash.", "steroid cream"),
    ("He is being treated for tuberculosis since May.", "tuberculosis"),
    ("I have been suffering from chronic migraines.", "chronic migraines"),
])
def test_a_prescription_or_a_diagnosis_is_still_found(text, value):
    assert ("MEDICAL_CONDITION", value) in _found(text)


@pytest.mark.parametrize("text,value,label", [
    ("In 2004 he was diagnosed with a psychotic illness by the Military Hospital.", "psychotic illness",
     "MEDICAL_CONDITION"),                                             # the article is not the condition
    ("Episodic onsets of sciatica are reported in the case history.", "sciatica", "MEDICAL_CONDITION"),
    ("The accident resulted in the loss of vision in his left eye.", "loss of vision", "MEDICAL_CONDITION"),
    ("On 3 May his wife gave birth to a son.", "gave birth", "MEDICAL_CONDITION"),
    ("He was charged with the import of a controlled drug (diamorphine).", "diamorphine", "MEDICATION"),
    ("She walks with a prosthetic knee since the operation.", "prosthetic", "MEDICAL_CONDITION"),
])
def test_a_condition_a_birth_or_a_drug_is_health_data(text, value, label):
    assert (label, value) in _found(text)


def test_an_article_after_suffering_from_is_not_a_diagnosis():
    assert not _found("The court was suffering from a lack of judges in 1999.")


@pytest.mark.parametrize("text,value", [
    ("While he was opening it, its metal cap hit the applicant’s left eye.", "left eye"),
    ("A CT scan revealed a metallic object in the left orbital area.", "left orbital area"),
    ("Her right knee is slightly limited in flexion.", "right knee"),
])
def test_a_side_of_someones_body_is_where_a_condition_is(text, value):
    assert ("MEDICAL_CONDITION", value) in _found(text)


@pytest.mark.parametrize("text", [
    "The figures are in the right hand column of the table.",
    "He has the right to hand in further documents.",
    "Turn into the left lane after the bridge.",
])
def test_a_direction_or_a_right_is_no_body_part(text):
    assert not _found(text)


def test_a_drug_brand_is_a_medication_above_ners_guess():
    """"Calpol, Nurofen for Children and Calprofen" had been typed a company and people by NER and replaced."""
    from guardian_proxy.extract import health

    text = "What's the difference between Calpol, Nurofen for Children and Calprofen for a 2 year old?"
    got = {(text[s:e], ent, score) for s, e, ent, score in health.find(text)}
    assert {("Calpol", "MEDICATION", 0.86), ("Nurofen", "MEDICATION", 0.86), ("Calprofen", "MEDICATION", 0.86)} <= got
