"""De-masking of whole strings and of streamed text split anywhere."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from guardian_proxy.session.demask import Demasker

DM = Demasker([("Alex Smith", "John Doe", True), ("Alex", "John", False), ("Smith", "Doe", False),
               ("Lake Jennifer", "Austin", True), ("alex.smith@example.net", "john.doe@gmail.com", True),
               ("[FAMILY_1]", "married", True), ("Acme Group", 'Real "Co"', True)])


def test_case_possessive_and_parts():
    text = "Hi Alex Smith's friend ALEX SMITH, alex smith, Mr. Smith; SMITH wrote to alex.smith@example.net."
    assert DM.full(text) == ("Hi John Doe's friend JOHN DOE, john doe, Mr. Doe; DOE wrote to john.doe@gmail.com.")


def test_never_guesses_or_touches_lookalikes():
    text = "Alexander Smithson, smith (lowercase part), Alexa, LakeJennifer, alex smithy, [FAMILY_10]"
    assert DM.full(text) == text
    assert DM.full("[FAMILY_1] with kids") == "married with kids"
    assert not Demasker([]) and Demasker([]).full("Alex Smith") == "Alex Smith"


def test_json_text_escapes_the_real_value():
    args = json.dumps({"company": "Acme Group", "who": "Alex Smith"})
    out = DM.full(args, json_text=True)
    assert json.loads(out) == {"company": 'Real "Co"', "who": "John Doe"}


TEXT = ("Dear Alex Smith, about Lake Jennifer: Alex's plan; Smith wrote. ALEX SMITH's! Alexander "
        "mail alex.smith@example.net [FAMILY_1].")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(TEXT) - 1), max_size=20, unique=True))
def test_stream_split_anywhere_equals_whole(cuts):
    cuts = sorted(cuts)
    parts = [TEXT[a:b] for a, b in zip([0] + cuts, cuts + [len(TEXT)], strict=True)]
    ch = DM.channel()
    out = "".join(ch.feed(p) for p in parts) + ch.flush()
    assert out == DM.full(TEXT)


def test_stream_holds_at_most_the_longest_surrogate():
    ch = DM.channel()
    assert ch.feed("Hello Alex Sm") == "Hello "
    assert ch.feed("ith and friends.") == "John Doe and friends."
    assert ch.feed(" Ale") == " "
    assert ch.flush() == "Ale"
    ch2 = DM.channel()
    assert ch2.feed("x" * 100) == "x" * 100  # nothing that could start a surrogate is held


def test_stream_word_boundary_uses_released_context():
    ch = DM.channel()
    assert ch.feed("Mc") == "Mc"
    assert ch.feed("Alex Smith ") == "Alex Doe "  # "McAlex" is no surrogate, "Smith" is
