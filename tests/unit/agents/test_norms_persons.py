"""Who a text is about (`norms.heuristic_persons`) and whom it speaks to (`norms.vocative`)."""

import pytest

from guardian_proxy.agents.norms import heuristic_persons, vocative


@pytest.mark.parametrize("text", ["Yesterday Emily Carter told me about the move.", "It is Mark Thompson's birthday.",
                                  "The defendant, Mr. Smithson, was accused.", "Swaps go through Priya.",
                                  "On Thursday Emily Carter moves to room 2A."])
def test_a_named_person_counts(text):
    assert heuristic_persons(text) > 0


@pytest.mark.parametrize("text", [
    # a subject line joined to its body: a weekday (or a month, also a given name) meets "The"
    "Room change for Thursday The Thursday design sync moves to room 2A.",
    "Room change for June The June design sync moves to room 2A.",
    "Sunny on Monday, rain from Tuesday.",
])
def test_a_day_or_a_month_is_no_one(text):
    assert heuristic_persons(text) == 0


@pytest.mark.parametrize("text,expected", [
    ("Jane, I've updated the event list.", True), ("Hey John, are we still on for tomorrow?", True),
    ("Good morning Mark! The report is ready.", True), ("Dear Emily: thank you.", True),
    ("However, I booked the flight.", False), ("Hey, are we still on?", False), ("Team, the build is green.", False),
    ("I met Jane, and we talked.", False),
])
def test_a_message_that_opens_with_a_given_name_speaks_to_that_person(text, expected):
    assert vocative(text) is expected
