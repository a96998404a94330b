"""anonymize/spans.py `propagate`: a livelihood found once ("reindeer herding") hides its rarer words wherever they
recur ("his reindeer", "the herding area"): they tell the same trade; a common word of it ("sheep") stays."""

from guardian_proxy.anonymize.spans import propagate
from guardian_proxy.types import Span, TextField


def _hidden(text: str, value: str) -> set[str]:
    f = TextField(path="body:$.text", text=text)
    a = text.index(value)
    span = Span(path=f.path, start=a, end=a + len(value), entity="OCCUPATION", category="other", text=value,
                direct=False)
    return {s.text for s in propagate([f], [span])}


def test_a_livelihoods_rare_words_are_hidden_where_they_recur():
    text = ("Their activities concern mainly reindeer herding. The herding area is large, and each member may graze "
            "his reindeer there.")
    assert _hidden(text, "reindeer herding") >= {"reindeer herding", "herding", "reindeer"}


def test_a_common_word_of_a_livelihood_or_of_another_job_stays():
    text = "They live from sheep farming. The sheep were sold at the market."
    assert _hidden(text, "sheep farming") == {"sheep farming"}
    text = "She is a school counsellor. The counsellor of the other school agreed."
    assert _hidden(text, "school counsellor") == {"school counsellor"}
