"""The resolver's context rules (extract/resolver.py): an acronym in a request's field."""

import pytest

from guardian_proxy.extract.context import RequestContext, field_context
from guardian_proxy.extract.registry import Result
from guardian_proxy.extract.resolver import people_organisation, resolve
from guardian_proxy.types import TextField


def _orgs(text: str, acronym: str) -> list[str]:
    f = TextField(path="json:$.text[0]", key="text", text=text)
    a = text.index(acronym)
    hit = [Result(a, a + len(acronym), "ORGANIZATION", 0.85, "ner", "ner:spacy ORGANIZATION 0.85")]
    return [s.text for s in resolve(f, hit, field_context(f, RequestContext(recipient="unknown_third_party")))]


@pytest.mark.parametrize("text", [
    "He was taken into custody on suspicion of membership of the PKK (the Workers' Party), an illegal organisation.",
    "The court convicted him of disseminating propaganda in favour of the PKK under section 7(2).",
    "He was accused of aiding and abetting the PKK, an offence under Article 169.",
    "She wrote articles on behalf of an illegal organisation, the PKK, in 2004.",
    "The PKK movement was based on the rural poor.",
    "I have been a member of the ACM since 2010.",
    "The demonstration supported the imprisoned leader of the KCK.",
])
def test_an_acronym_the_text_calls_a_body_of_people_is_an_organisation(text):
    acronym = next(w.strip(".,") for w in text.split() if w.strip(".,").isupper() and len(w.strip(".,")) >= 3)
    assert people_organisation(text, text.index(acronym), text.index(acronym) + len(acronym))
    assert _orgs(text, acronym) == [acronym]


@pytest.mark.parametrize("text, acronym", [
    ("SSE finish", "SSE"),
    ("The API error came back after the retry.", "API"),
    ("We need support for the CSV export in the new release.", "CSV"),
    ("Export the GDPR report as JSON before Friday.", "JSON"),
])
def test_a_technologys_acronym_stays_no_ones_data(text, acronym):
    assert not people_organisation(text, text.index(acronym), text.index(acronym) + len(acronym))
    assert _orgs(text, acronym) == []
