"""Surrogates: same type and format, consistent name parts, no collisions."""

import random
import re

from guardian_proxy.session.surrogates import SurrogateMaker, given_name_sex, scramble

M = SurrogateMaker()


def make(entity, value, names=None, avoid=lambda c: False, seed=7):
    n = iter(range(1, 100))
    return M.make(entity, value, seed, names if names is not None else {}, avoid, lambda: next(n))


def test_person_parts_are_consistent():
    names = {}
    full = make("PERSON", "John Doe", names)
    first, last = full.split()
    assert full != "John Doe" and names == {"john": first, "doe": last}
    assert make("PERSON", "Mr. Doe", names) == f"Mr. {last}"
    assert make("PERSON", "JOHN", names) == first.upper()
    assert make("PERSON", "John A. Doe", names, seed=9).split()[::2] == [first, last]


def test_formats():
    assert re.fullmatch(r"\+1 \d{3}-\d{3}-\d{4}", make("PHONE_NUMBER", "+1 512-555-0198"))
    names = {"maria": "Alexis", "gonzalez": "Moore"}
    assert make("EMAIL_ADDRESS", "maria.gonzalez@gmail.com", names).split("@")[0] == "alexis.moore"
    assert make("EMAIL_ADDRESS", "zq9@corp.io").endswith(("@example.com", "@example.net", "@example.org"))
    amount = make("AMOUNT", "$85,000")
    assert re.fullmatch(r"\$\d{2,3},000", amount) and amount != "$85,000"
    assert re.fullmatch(r"\d+ years old", make("AGE", "41 years old"))
    date = make("DATE", "March 3, 2021")
    assert re.fullmatch(r"[A-Z][a-z]+ \d{1,2}, 20[12]\d", date) and not date.startswith("March")
    assert re.fullmatch(r"\d{2}/\d{2}/\d{4}", make("DATE", "03/14/1985"))
    assert make("IP_ADDRESS", "10.1.2.3").startswith(("192.0.2.", "198.51.100.", "203.0.113."))
    assert make("LOCATION", "Texas") != "Texas"
    school = make("ORGANIZATION", "Lincoln High School")  # the kind of organisation is kept
    assert school.endswith(" High School") and not school.startswith("Lincoln")
    assert make("ORGANIZATION", "St Mary's Hospital").endswith(" Hospital")
    assert re.fullmatch(r"sk-[a-zA-Z0-9]{20}", make("API_KEY", "sk-abcDEF1234567890abcd"))
    assert make("NARRATIVE", "a long story") == "[NARRATIVE_1]"
    assert make("FAMILY", "married") == "[FAMILY_1]"


def test_avoid_rejects_collisions():
    seen = set()
    for _ in range(5):
        c = make("LOCATION", "Austin", avoid=lambda c: c in seen)
        assert c not in seen
        seen.add(c)


def test_scramble_keeps_layout():
    out = scramble("AB-1234-cd", random.Random(1))
    assert re.fullmatch(r"AB-\d{4}-[a-z]{2}", out)


def test_a_pseudonym_never_carries_or_sits_inside_a_real_value():
    from guardian_proxy.session.surrogates import overlaps_real

    real = ["nurse", "Doorwright", "Jane Doorwright", "Acme Health"]
    assert overlaps_real("psychiatric nurse", real)  # carries the real occupation
    assert overlaps_real("Doorwright LLC", real)  # an employer named after the user's surname
    assert overlaps_real("Acme", real)  # sits inside the real employer
    assert not overlaps_real("pharmacist", real) and not overlaps_real("Brightwell Ltd", real)
    assert not overlaps_real("Ann", ["Anna Smith"])  # whole words only


def test_a_given_names_sex_is_kept():
    """"my daughter Emma" must not become "my daughter Jonathan": the model would answer with "he"."""
    from guardian_proxy.session.surrogates import given_name_sex

    assert given_name_sex("Emma") == "f" and given_name_sex("John") == "m" and given_name_sex("Alex") == ""
    # a name of the world's lists only ("Rui Tavares" had become "Jacqueline Warner")
    assert given_name_sex("Rui") == "m" and given_name_sex("Chiamaka") == "f"
    maker = SurrogateMaker()
    for seed in range(20):
        first = maker.person("Emma Watson", seed, {}, lambda c: False).split()[0]
        assert given_name_sex(first) != "m", first
        first = maker.person("John Watson", seed, {}, lambda c: False).split()[0]
        assert given_name_sex(first) != "f", first
    for seed in range(10):  # a given name the lists do not know: the title decides
        first = maker.person("Mrs Xyla Quarrington", seed, {}, lambda c: False).split()[1]
        assert given_name_sex(first) != "m", first


def test_a_kin_noun_says_the_sex_of_a_name_the_lists_do_not_know():
    """"my husband Kenji Watanabe" (Kenji is in no list) must not become a woman's name."""
    from guardian_proxy.session.namecues import kin_sex
    from guardian_proxy.session.surrogates import given_name_sex

    assert kin_sex("My husband Kenji Watanabe was diagnosed", "Kenji Watanabe") == "m"
    assert kin_sex("my sister, Olamide, and I", "Olamide") == "f"
    assert kin_sex("Olamide called", "Olamide") == ""
    assert kin_sex("mentions her nickname, Nónó, and", "Nónó") == "f"  # it had become "Marc"
    assert kin_sex("his name is Kwabena", "Kwabena") == "m"
    assert kin_sex("my son Sam and my daughter Sam", "Sam") == ""  # the words disagree: say nothing
    maker = SurrogateMaker()
    for seed in range(10):
        first = maker.person("Kenji Watanabe", seed, {}, lambda c: False, "m").split()[0]
        assert given_name_sex(first) != "f", first


def test_an_ages_stand_in_keeps_the_stage_of_life():
    from guardian_proxy.session.surrogates import _near_age

    rng = random.Random(7)
    for age, lo, hi in [(15, 13, 17), (13, 13, 15), (9, 7, 11), (2, 1, 4), (34, 29, 39), (19, 18, 24)]:
        for _ in range(30):
            other = int(_near_age(age, rng))
            assert other != age and lo <= other <= hi, (age, other)


def test_a_degrees_stand_in_is_a_degree_of_the_same_level():
    """"MSc from University of Edinburgh" had become "Company secretary from …"."""
    import re

    maker = SurrogateMaker()
    for seed in range(30):
        sur = maker.make("OCCUPATION", "MSc", seed, {}, lambda c: False, lambda: 1)
        assert sur in ("MA", "MEng", "MBA", "MPhil"), sur
        sur = maker.make("OCCUPATION", "PhD", seed, {}, lambda c: False, lambda: 1)
        assert re.fullmatch(r"DPhil|EdD", sur), sur


def test_a_surnames_particles_stay_between_the_stand_ins_names():
    """"Jan-Willem van der Berg" had become "Stephanie van carolyn Burke"."""
    maker = SurrogateMaker()
    for seed in range(20):
        sur = maker.person("Jan-Willem van der Berg", seed, {}, lambda c: False)
        words = sur.split()
        assert words[1:3] == ["van", "der"] and len(words) == 4 and words[3] != "Berg", sur
        assert given_name_sex(words[0]) != "f", sur  # "Jan" says a man


def test_a_street_whose_kind_comes_first_keeps_its_word_and_order():
    """"27 Rue Oberkampf" → "44 Rue Barker", "Calle de Alcalá 48" → "Calle Soto 312": Faker's English street names
    would put the kind after the name ("Barker Rue")."""
    m = SurrogateMaker()
    for value in ("27 Rue Oberkampf", "Calle de Alcalá 48", "Via Roma 12"):
        kind = value.split()[1] if value[0].isdigit() else value.split()[0]
        for seed in range(5):
            out = m.address_part("street", value, seed, lambda _: False)
            words = out.split()
            assert kind in words and words.index(kind) == (1 if value[0].isdigit() else 0), out
            assert out != value and not set(words) & (set(value.split()) - {kind}), out


def test_an_initials_stand_in_is_never_the_initial_itself():
    for seed in range(60):
        out = M.person("R. K. Iyer", seed, {}, lambda _: False)
        assert out[0] != "R" and out[3] != "K" and "Iyer" not in out, out


def test_a_surname_alone_under_its_key_gets_a_surname():
    from faker.providers.person.en_US import Provider

    from guardian_proxy.session.namecues import surname_alone

    text = '{"first_name": "Lucía", "last_name": "Márquez"}'
    assert surname_alone(text, "Márquez") and not surname_alone(text, "Lucía")
    last = {n.casefold() for n in Provider.last_names}
    for seed in range(10):
        assert M.person("Márquez", seed, {}, lambda _: False, surname=True).casefold() in last


def test_a_postcode_alone_stays_a_postcode():
    """A record's "postal_code": "10124" had become a town's name ("Johnsonmouth")."""
    for value, shape in (("10124", r"\d{5}"), ("560034", r"\d{6}"), ("SN1 5LW", r"[A-Z]{2}\d \d[A-Z]{2}"),
                         ("B10 0AE", r"[A-Z]\d\d \d[A-Z]{2}")):
        new = make("LOCATION", value)
        assert re.fullmatch(shape, new) and new != value
    assert not re.search(r"\d", make("LOCATION", "Torino"))


def test_one_word_after_a_familys_title_is_a_given_name():
    for seed in range(5):  # a man's given name after "Uncle", a woman's after "Auntie" (a surname after "Mrs")
        title, given = make("PERSON", "Uncle Fergus", seed=seed).split()
        assert title == "Uncle" and given_name_sex(given) == "m", given
        title, given = make("PERSON", "Auntie Patricia", seed=seed).split()
        assert title == "Auntie" and given_name_sex(given) == "f", given
    assert make("PERSON", "Mrs Keane").split()[0] == "Mrs"


def test_a_dictated_number_gets_a_dictated_stand_in_and_a_short_upper_case_id_keeps_its_digits():
    new = make("PHONE_NUMBER", "oh eight seven three one four two two nine oh six")
    assert len(new.split()) == 11 and not re.search(r"\d", new) and new != "oh eight seven three one four two two nine oh six"
    assert re.fullmatch(r"[A-Z]\d{8}", scramble("A09417723", random.Random(1), keep_prefix=False))
