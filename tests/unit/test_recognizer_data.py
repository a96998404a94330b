"""guardian_proxy/recognizer_data.py: the recognizers' word lists, one loader for the extract stage and the session."""

from guardian_proxy.extract import validators
from guardian_proxy.recognizer_data import data


def test_the_lists_are_loaded_once_and_shared():
    d = data()
    assert d is data() and validators.data is data  # one loader: the extract stage reads the same lists
    assert {"copilot", "whatsapp", "jira"} <= d["not_name_terms"] and "respond" in d["common_words"]
    assert all(w == w.lower() for w in d["not_name_terms"] | d["common_words"])
