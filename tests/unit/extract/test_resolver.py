"""The resolver's context rules (extract/resolver.py): an acronym in a request's field, a product's name."""

import pytest

from guardian_proxy.extract.context import RequestContext, field_context
from guardian_proxy.extract.registry import Result
from guardian_proxy.extract.resolver import _product_names, people_organisation, resolve
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


def _found(text: str, *hits: tuple[str, str]) -> list[tuple[str, str]]:
    """The spans the resolver makes of NER/narrative hits (value, entity) in a prose field."""
    f = TextField(path="text:", text=text)
    results = [Result(text.index(v), text.index(v) + len(v), e, 0.85, "ner" if e != "OCCUPATION" else "narrative", "")
               for v, e in hits]
    return [(s.text, s.entity) for s in resolve(f, results, None)]


@pytest.mark.parametrize("text,hits", [
    ("Google Tag Manager", [("Google", "ORGANIZATION"), ("Manager", "OCCUPATION")]),
    ("We load Google Tag Manager and Adobe Analytics on every page.",
     [("Google", "ORGANIZATION"), ("Manager", "OCCUPATION"), ("Adobe Analytics", "ORGANIZATION")]),
    ("Open Google Admin and add the user.", [("Google Admin", "PERSON")]),
])
def test_a_products_name_made_with_a_vendors_name_is_no_ones_data(text, hits):
    assert _found(text, *hits) == []


@pytest.mark.parametrize("text,hits", [
    ("I work at Google as a Manager.", [("Google", "ORGANIZATION"), ("Manager", "OCCUPATION")]),
    ("She is a Google Manager now.", [("Google", "ORGANIZATION"), ("Manager", "OCCUPATION")]),  # a job, no product
    ("He is our Customer Service Manager.", [("Customer Service Manager", "OCCUPATION")]),      # no vendor
])
def test_a_vendor_alone_or_a_job_beside_it_stays(text, hits):
    assert _found(text, *hits) == hits


def test_product_names_are_runs_of_the_product_vocabulary_with_a_vendor():
    text = "Google Tag Manager, Facebook Pixel, Google, Tag Manager and Google\nAnalytics"
    assert [text[a:b] for a, b in _product_names(text)] == ["Google Tag Manager", "Facebook Pixel"]


def test_ner_running_into_a_direct_identifier_ends_where_it_begins():
    """"Lily-Mae B - dad Gareth - 07812 340 675": spaCy's organisation ran into the phone number, and the rewrite of
    the longer span cut the number in two."""
    text = "Lily-Mae B - dad Gareth - 07812 340 675"
    f = TextField(path="json:$.t", text=text)
    phone = text.index("07812")
    spans = resolve(f, [Result(0, phone + 5, "ORGANIZATION", 0.85, "ner", "ner:spacy ORGANIZATION"),
                        Result(phone, len(text), "PHONE_NUMBER", 0.75, "narrative", "narrative")],
                    field_context(f, None), 0.4)
    assert sorted((s.entity, s.text) for s in spans) == [("ORGANIZATION", "Lily-Mae B - dad Gareth"),
                                                          ("PHONE_NUMBER", "07812 340 675")]
