"""guardian_proxy/hashtags.py: a hashtag's words tell the writer's family role or status, or a topic."""

import pytest

from guardian_proxy.hashtags import personal_hashtag


@pytest.mark.parametrize("tag", ["#SingleDad", "MomLife", "#JustMarried", "#twins", "#NEWLYWEDS"])
def test_a_status_hashtag_is_personal(tag):
    assert personal_hashtag(tag)


@pytest.mark.parametrize("tag", ["#travel", "#ReindeerHerding", "#Photography", "#", ""])
def test_a_topic_hashtag_is_not(tag):
    assert not personal_hashtag(tag)
