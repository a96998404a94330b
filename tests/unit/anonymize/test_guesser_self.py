"""anonymize/guesser.py: the deterministic adversary reads what a rewrite still says of its writer (self_disclosure.py)
and, verified against the original, that raises the level until the attribute is generalized."""

from guardian_proxy.anonymize import Transformer
from guardian_proxy.anonymize.guesser import DeterministicGuesser
from guardian_proxy.types import Span, TextField


def test_a_kept_self_disclosure_is_a_guess():
    g = DeterministicGuesser().guess("plumber here - never trust a cheap fitting. I'm 34, btw.")
    assert {(x.value, x.cue) for x in g} >= {("plumber", "self"), ("34", "self")}
    assert all(x.confidence >= 0.6 for x in g if x.cue == "self")


def test_a_generalized_one_is_not():
    assert [x for x in DeterministicGuesser().guess("[OCCUPATION] here - never trust a cheap fitting.")
            if x.cue == "self"] == []


def test_the_level_rises_until_the_writers_job_is_hidden():
    text = "plumber here - never trust a cheap fitting, they always leak."
    field = TextField(path="body:$.text", text=text)
    span = Span(path=field.path, start=0, end=7, entity="OCCUPATION", category="demographic", text="plumber",
                direct=False)
    out = Transformer().anonymize([field], [span], level=2)
    assert out.level == 3 and out.cues == {"self": 1}
    assert out.texts[field.path].startswith("[OCCUPATION] here")


def test_without_a_self_disclosure_the_level_stays():
    text = "a plumber fixed the cheap fitting, it always leaked."
    field = TextField(path="body:$.text", text=text)
    span = Span(path=field.path, start=2, end=9, entity="OCCUPATION", category="demographic", text="plumber",
                direct=False)
    assert Transformer().anonymize([field], [span], level=2).level == 2
