"""guardian_proxy/person_names.py: Faker's name lists, read once for every locale."""

from guardian_proxy.person_names import faker_names


def test_lists_by_kind_and_locale():
    women, men, last = faker_names("first_names_female"), faker_names("first_names_male"), faker_names("last_names")
    assert {"emma", "sofia"} <= women and {"john", "lukas"} <= men and {"smith", "müller", "rossi"} <= last
    assert "emma" not in men and faker_names("first_names_female") is women  # cached
