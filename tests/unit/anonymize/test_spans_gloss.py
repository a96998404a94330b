"""anonymize/spans.py `aliases`: a gloss in another language right after a hidden value is hidden with it; an
English parenthesis (a defined term, a reference) and a public body's own-language kind stay."""

import pytest

from guardian_proxy.anonymize.spans import foreign_gloss, propagate
from guardian_proxy.types import ENTITIES, Span, TextField


def _hidden(text: str, value: str, entity: str) -> list[str]:
    f = TextField(path="json:$.text", key="text", text=text)
    a = text.index(value)
    cat, direct = ENTITIES[entity]
    span = Span(path=f.path, start=a, end=a + len(value), entity=entity, category=cat, score=0.8, text=value,
                direct=direct)
    return sorted(s.text for s in propagate([f], [span]))


@pytest.mark.parametrize("text, value, entity, gloss", [
    ("The applicant is detained in Muret (Haute-Garonne) since 2004.", "Muret", "LOCATION", "Haute-Garonne"),
    ("The four Lapp villages (samebyar) lodged the application.", "Lapp villages", "ORGANIZATION", "samebyar"),
    ("He failed to appoint a legally responsible editor (ansvarig utgivare) for the show.", "editor", "OCCUPATION",
     "ansvarig utgivare"),
    ("She wrote to the Social Insurance Authority (Zaklad Ubezpieczen Spolecznych) in Gdansk.",
     "Social Insurance Authority", "ORGANIZATION", "Zaklad Ubezpieczen Spolecznych"),
])
def test_a_gloss_in_another_language_is_hidden_with_the_value(text, value, entity, gloss):
    assert _hidden(text, value, entity) == sorted([value, gloss])


@pytest.mark.parametrize("text, value, entity", [
    ("The case was brought before the Commission of Human Rights (the Commission) in 1991.",
     "Commission of Human Rights", "ORGANIZATION"),
    ("He lives in Leeds (see below) with his sister.", "Leeds", "LOCATION"),
    ("The Warsaw Court of Appeal (Sąd Apelacyjny) dismissed the appeal.", "Warsaw Court of Appeal", "ORGANIZATION"),
    ("He was paid in Istanbul (1998) and again in Izmir.", "Istanbul", "LOCATION"),
])
def test_an_english_parenthesis_or_a_bodys_kind_stays(text, value, entity):
    assert _hidden(text, value, entity) == [value]


def test_foreign_gloss():
    assert foreign_gloss("caisse primaire centrale d’assurance maladie")
    assert not foreign_gloss("the party")
    assert not foreign_gloss("TRY")
    assert not foreign_gloss("no. 1996/276")


def test_a_gloss_after_an_occurrence_found_by_propagation_is_hidden_too():
    # the value is found once ("Sami Villages"); its other occurrence, in another case, carries the gloss
    text = "The Sami Villages appealed. It was brought by the following four Swedish Sami villages (samebyar): A, B."
    assert _hidden(text, "Sami Villages", "ORGANIZATION") == sorted(["Sami Villages", "Sami villages", "samebyar"])
