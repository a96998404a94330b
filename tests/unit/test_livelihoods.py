"""A livelihood named by its activity (guardian_proxy/livelihoods.py), shared by the narrative recognizer and the
anonymizer's propagation: a noun and an activity noun after it is a trade; the activity alone, or after a person or
a figure of speech, is none."""

import pytest

from guardian_proxy.livelihoods import ACTIVITIES, is_livelihood


@pytest.mark.parametrize("value", ["reindeer herding", "sheep farming", "cattle breeding", "winter grazing",
                                   "pig rearing", "Reindeer Husbandry", "cattle ranching"])
def test_a_noun_and_an_activity_is_a_trade(value):
    assert is_livelihood(value)


@pytest.mark.parametrize("value", ["farming", "grazing rights", "child rearing", "factory farming", "data farming",
                                   "cat herding", "herding", "the breeding"])
def test_the_activity_alone_a_person_raised_or_a_figure_of_speech_is_no_trade(value):
    assert not is_livelihood(value)


def test_activities_are_lower_case_nouns():
    assert all(a == a.lower() and a.endswith(("ing", "ry")) for a in ACTIVITIES)
