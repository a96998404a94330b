"""guardian_proxy/recognizer_data.py: the recognizers' word lists, one loader for the extract stage and the session."""

from guardian_proxy.extract import validators
from guardian_proxy.recognizer_data import data


def test_the_lists_are_loaded_once_and_shared():
    d = data()
    assert d is data() and validators.data is data  # one loader: the extract stage reads the same lists
    assert {"copilot", "whatsapp", "jira"} <= d["not_name_terms"] and "respond" in d["common_words"]
    assert all(w == w.lower() for w in d["not_name_terms"] | d["common_words"])


def test_no_product_term_is_a_listed_name():
    """The terms that are no one's name hold products, not given names or surnames of the name lists: a name with
    any of them is not a person's ("Facebook Pixel"), so "Julia" or "Okta" (a Faker surname) may not be one."""
    from guardian_proxy.session.namecues import listed_name

    assert {"tailwind", "grafana", "xcode", "prisma"} <= data()["not_name_terms"]
    assert sorted(w for w in data()["not_name_terms"] if listed_name(w)) == ["safari", "server"]
