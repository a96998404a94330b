"""guardian_proxy/session/namecues.py: what the words around a name say it is (the chat session's rules run through
PartContext in test_context.py; these are the cues alone)."""

from guardian_proxy.session.namecues import ordinary, person_by_cue, product, work_name
from guardian_proxy.session.rewrite import Hit


def hit(text: str, value: str, entity: str = "PERSON") -> Hit:
    start = text.index(value)
    return Hit(0, start, start + len(value), entity, value)


def test_ordinary_words_are_not_names_unless_also_names():
    assert ordinary("Respond") and ordinary("test") and not ordinary("Grace") and not ordinary("Zarkowsky")


def test_product_cues():
    for text, value in [("my Django app crashes", "Django"), ("Docker's COPY and ADD", "Docker"),
                        ("Jenkins 2.401.1 fails", "Jenkins"), ("push to a Vec", "Vec")]:
        assert product(text, hit(text, value)), text
    for text, value in [("send Tom Baker documentation", "Tom Baker"), ("Priya logs in", "Priya"),
                        ("Give Anna 2 apples", "Anna")]:
        assert not product(text, hit(text, value)), text


def test_work_cues():
    text = "the plot of Pride and Prejudice by Jane Austen; Dune by Frank Herbert; a poem by my aunt Rosa Klebb"
    persons = [hit(text, v) for v in ("Jane Austen", "Dune", "Frank Herbert", "Rosa Klebb")]
    assert [work_name(text, h, persons) for h in persons] == [True, True, True, False]
    text = "Give me a short biography of Marie Curie. Email John Smith the Q3 Report by Dana Whitfield."
    persons = [hit(text, v) for v in ("Marie Curie", "John Smith", "Dana Whitfield")]
    assert [work_name(text, h, persons) for h in persons] == [True, False, False]


def test_a_person_ner_typed_as_something_else():
    text = "My name is Darnell Okoro. My daughter Sofia Marchand. This is Lakeview Credit Union. It's Sydney."
    assert person_by_cue(text, hit(text, "Darnell Okoro", "ORGANIZATION"))
    assert person_by_cue(text, hit(text, "Sofia Marchand", "ORGANIZATION"))
    assert not person_by_cue(text, hit(text, "Lakeview Credit Union", "ORGANIZATION"))
    assert not person_by_cue(text, hit(text, "Sydney", "LOCATION"))
    assert not person_by_cue(text, hit(text, "Darnell Okoro", "PERSON"))  # already a person: nothing to retype
