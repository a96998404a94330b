"""extract/narrative.py reports the writer's own attributes (self_disclosure.py) beside its own recognizers, past
the filter's rule for a job in the story: "my master's degree" is the writer's, not a function after a possessive."""

import pytest

from guardian_proxy.extract.narrative import detect_quasi


@pytest.mark.parametrize(("text", "value", "label"), [
    ("it took me years to finish my master's degree", "master's degree", "OCCUPATION"),
    ("math nerd turned gym owner here - no regrets", "gym owner", "OCCUPATION"),
    ("Being happily single has its upsides.", "single", "FAMILY"),
    ("I make 80k a year and rent eats half", "80k a year", "AMOUNT"),
])
def test_self_disclosures_are_quasi_identifiers(text, value, label):
    assert (value, label) in {(text[s:e], lab) for s, e, lab, _ in detect_quasi(text, None)}


def test_the_same_words_said_of_no_one_are_not():
    text = "every single time the gym owner said a degree in which he believed"
    assert [(text[s:e], lab) for s, e, lab, _ in detect_quasi(text, None) if lab in ("FAMILY", "OCCUPATION")] == []
