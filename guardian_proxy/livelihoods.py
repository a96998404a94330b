"""A livelihood named by its activity: what someone herds, farms, breeds or grazes for a living ("reindeer herding",
"sheep farming", "cattle breeding", "winter grazing"). It says what the person does, as a job title does ("a reindeer
herder"), so it is an occupation; the activity alone ("farming", "the grazing rights") names no one's trade, and
neither does an adjective before it ("organic farming", "selective breeding"): a noun must say what is herded or
farmed, or when.

Shared by the narrative recognizer (extract/narrative.py finds the phrase) and the anonymizer's propagation
(anonymize/spans.py hides its rare words wherever they recur: "his reindeer", "the grazing" tell the same trade), which
may not import each other's stage.
"""

from __future__ import annotations

import regex as re

#: activity nouns that name a trade only with a noun before them ("reindeer herding", "pig farming")
ACTIVITIES = frozenset({"herding", "husbandry", "farming", "breeding", "rearing", "grazing", "ranching"})
#: nouns before an activity that make it no trade: a person raised ("child rearing") or a word of the activity's
#: other senses ("factory farming" is a topic, "data farming" no herd)
NOT_HERDED = frozenset({"child", "children", "baby", "kid", "kids", "factory", "battery", "data", "content", "server",
                        "click", "link", "cat"})

#: words that say which or whose, not what is herded ("the grazing", "such grazing", "of breeding")
_FUNCTION = frozenset({"the", "a", "an", "his", "her", "their", "its", "our", "my", "your", "this", "that", "these",
                       "those", "such", "any", "some", "no", "of", "to", "for", "and", "or", "in", "on", "by", "with",
                       "from", "as", "at"})
_WORD = re.compile(r"\p{L}[\p{L}'’\-]*")


def is_livelihood(value: str) -> bool:
    """Is `value` a livelihood phrase: a noun (not a person, not a figure of speech) and an activity noun after it?"""
    words = [w.lower() for w in _WORD.findall(value)]
    return len(words) >= 2 and words[-1] in ACTIVITIES and not {words[-2]} & (ACTIVITIES | NOT_HERDED | _FUNCTION)
