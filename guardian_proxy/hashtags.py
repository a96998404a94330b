"""What a hashtag says: a topic (#travel, #ReindeerHerding) or the writer's own family role or status (#SingleDad,
#MomLife, #JustMarried), which is personal. Shared by the detector's hit filter (a name inside a topic hashtag is
no person) and the anonymizer (a topic hashtag stays, a status one is hidden)."""

from __future__ import annotations

import regex as re

#: a hashtag with one of these words tells the writer's own family role or status (#SingleDad, #MomLife,
#: #JustMarried): personal, not a topic
_STATUS_WORDS = {
    "dad", "dads", "daddy", "mom", "moms", "mommy", "mum", "mums", "mummy", "mama", "papa", "father", "mother",
    "wife", "husband", "single", "married", "divorced", "divorcee", "widow", "widowed", "widower", "pregnant",
    "newlywed", "newlyweds", "grandma", "grandpa", "granny", "stepmom", "stepdad", "fiance", "fiancee", "bride",
    "groom", "twins", "expecting",
}
_CAMEL = re.compile(r"\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})")


def personal_hashtag(tag: str) -> bool:
    """Is a hashtag's text ("SingleDad", "#MomLife") about the writer's family role or status? Its words are
    read by their capitals (camel case)."""
    return any(w.lower() in _STATUS_WORDS for w in _CAMEL.findall(tag.lstrip("#")))
