"""self_disclosure.py: the writer's own attributes, each class typed as the project's quasi-identifier classes, and
the same words where they are not the writer's left alone. The texts are made up here (forum and chat idioms)."""

import time

import pytest

from guardian_proxy.self_disclosure import PATTERNS, find


def found(text: str) -> list[tuple[str, str]]:
    return [(text[s:e], entity) for s, e, entity, _ in sorted(find(text))]


@pytest.mark.parametrize(("text", "expected"), [
    # a job named by its holder: "<job> here" opening a clause, after a lead-in word or a former self
    ("plumber here - never trust a cheap fitting", [("plumber", "OCCUPATION")]),
    ("Retired nurse here; the night shifts never leave you", [("Retired nurse", "OCCUPATION")]),
    ("yeah, dental technician here and I agree", [("dental technician", "OCCUPATION")]),
    ("fellow radiologist here!", [("radiologist", "OCCUPATION")]),
    ("ex-banker turned bakery owner here - best move ever", [("bakery owner", "OCCUPATION")]),
    ("as I said (“pharmacist here”) it depends", [("pharmacist", "OCCUPATION")]),
    # "<job> life" opening a clause, a post held ("as principal")
    ("nurse life = coffee and no sleep", [("nurse", "OCCUPATION")]),
    ("My first week as head chef was chaos.", [("head chef", "OCCUPATION")]),
])
def test_a_job_the_writer_names_is_an_occupation(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", [
    "Anyone here? Is there a doctor here?",         # a question after others
    "Nurses here? Teachers here?",                  # plural: a group asked after
    "The teacher here was strict.",                 # someone in the story
    "long time lurker here - first post",           # no job
    "Same here! Me too here.",
    "professions such as doctor or lawyer",         # a list of jobs, no one's
    "Student life is expensive everywhere.",        # a stage of life anyone writes about
    "Academic life is full of twists.",             # an adjective: a topic, not a job
    "we worked hard as well as long",
    "What does someone do as principal investigator?",   # a question about the world
    "Explain the duties of a deputy serving as principal.",  # an instruction
])
def test_words_that_name_no_ones_job_stay(text):
    assert [e for _, e in found(text) if e == "OCCUPATION"] == []


@pytest.mark.parametrize(("text", "expected"), [
    ("it took me years to finish my master's degree", "master's degree"),
    ("I'm studying towards a bachelor's degree in chemistry", "bachelor's degree in chemistry"),
    ("I have a degree in economics and a law degree", "degree in economics"),
    ("diploma in horticulture here, but I work in IT", "diploma in horticulture"),
])
def test_an_education_is_typed_as_the_degrees_are(text, expected):
    assert (expected, "OCCUPATION") in found(text)


@pytest.mark.parametrize("text", ["to a degree in which nobody agreed", "30 degrees in the shade",
                                  "a first-degree burn", "Explain what a master's degree in economics covers.",
                                  "Is a law degree worth it?"])
def test_degree_of_measure_is_no_education(text):
    assert found(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("I'm single and honestly fine with it", "single"),
    ("Being happily single has its upsides.", "single"),
    ("staying single keeps my weekends free", "single"),
    ("single life hasn't changed me much", "single"),
    ("Single but busy, as always.", "single"),
    ("more free time since single lol", "single"),
    ("I've been in a long-distance relationship for two years.", "in a long-distance relationship"),
])
def test_a_relationship_status_of_the_writer_is_family(text, value):
    assert (value.lower(), "FAMILY") in [(v.lower(), e) for v, e in found(text)]


@pytest.mark.parametrize("text", [
    "every single time I try, it burns",
    "a single-use plastic ban",
    "For those who chose to stay single, has your view changed?",
    "what's it like being single where you live?",
    "Single = fewer dishes",
    "I'm single-handedly fixing this",
])
def test_single_that_is_no_ones_status_stays(text):
    assert found(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm 34 and new to running", [("34", "AGE")]),
    ("I just turned 30, send help", [("30", "AGE")]),
    ("Advice please (27F)", [("27", "AGE"), ("F", "GENDER")]),
    ("[m 41] looking for a climbing partner", [("m", "GENDER"), ("41", "AGE")]),
    ("As a woman in engineering, I hear this a lot", [("woman", "GENDER")]),
    ("I'm a 34-year-old woman with a bad knee", [("woman", "GENDER")]),
])
def test_age_and_sex_of_the_writer(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", ["I'm 20 minutes away", "I was 15 km from home", "they treated her as a woman.",
                                  "I'm 3 days late", "as a man of his word, he came"])
def test_numbers_and_sex_nouns_not_the_writers_stay(text):
    assert found(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("I make 80k a year and still can't buy a flat", "80k a year"),
    ("we earn about $62,000 between us", "$62,000"),
    ("I only make £1,900 a month", "£1,900 a month"),
])
def test_an_income_the_writer_states_is_an_amount(text, value):
    assert found(text) == [(value, "AMOUNT")]


@pytest.mark.parametrize("text", ["I make 3 trips a week", "we earned 12 points"])
def test_a_count_after_make_is_no_income(text):
    assert found(text) == []


def test_the_spans_hold_the_value_only():
    text = "I'm 34, single, and a diesel mechanic here in town"
    assert [(v, e) for v, e in found(text)] == [("34", "AGE")]  # "mechanic here in" does not close a clause


def test_patterns_are_linear_on_adversarial_input():
    """The ReDoS guard of tests/unit/extract/test_extract_redos.py, on this module's patterns and on find()."""
    from tests.unit.extract.test_extract_redos import INPUTS

    for pat in PATTERNS:
        for text in INPUTS.values():
            t0 = time.perf_counter()
            for _ in pat.finditer(text):
                pass
            pat.fullmatch(text)
            assert time.perf_counter() - t0 < 1.5, (pat.pattern[:40])
    for text in INPUTS.values():
        t0 = time.perf_counter()
        find(text)
        assert time.perf_counter() - t0 < 3.0
