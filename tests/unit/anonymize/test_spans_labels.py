"""A field label is never part of a person's span (anonymize/spans.py `titles`): "Title: Mrs. Name: Ashley Smith"."""

import pytest

from guardian_proxy.anonymize.spans import propagate
from guardian_proxy.types import TextField


def _spans(text: str) -> list[tuple[str, str]]:
    return [(s.entity, s.text) for s in propagate([TextField(path="text:", text=text)], [])]


@pytest.mark.parametrize("text,expected", [
    ("Gender: Female. Title: Mrs. Name: Ashley Smith.", [("GENDER", "Mrs")]),   # the label "Name" is no name
    ("Title: Mr\nName: Bob Jones", [("GENDER", "Mr")]),
    ("Contact: Mr Smith Email: smith@example.com", [("PERSON", "Mr Smith")]),   # cut before the next label
    ("Name: Mrs. Ashley Smith.", [("PERSON", "Mrs. Ashley Smith")]),
    ("Mr Jones: I disagree with the minutes.", [("PERSON", "Mr Jones")]),       # a speaker, not a label
    ("Dear Mr Casey, Dr. Okafor wrote.", [("PERSON", "Mr Casey"), ("PERSON", "Dr. Okafor")]),
])
def test_a_titled_name_stops_at_a_field_label_and_a_title_alone_is_the_sex(text, expected):
    assert _spans(text) == expected
