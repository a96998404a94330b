"""guardian_proxy/person_names.py: Faker's name lists, read once for every locale."""

from guardian_proxy.person_names import faker_names


def test_lists_by_kind_and_locale():
    women, men, last = faker_names("first_names_female"), faker_names("first_names_male"), faker_names("last_names")
    assert {"emma", "sofia"} <= women and {"john", "lukas"} <= men and {"smith", "müller", "rossi"} <= last
    assert "emma" not in men and faker_names("first_names_female") is women  # cached


def test_names_of_other_scripts_are_listed_romanised():
    """Faker's ja_JP and zh_CN/zh_TW lists are kanji and hanzi; their romanised lists and Korea's commonest surnames
    ("Seo Ji-woo") are what English text writes."""
    from guardian_proxy.person_names import WORLD

    last = faker_names("last_names", locales=WORLD)
    assert {"tanaka", "suzuki", "zhao", "seo", "yoon", "park"} <= last
    assert "seo" not in faker_names("last_names")  # the usual locales' lists stay as Faker has them
