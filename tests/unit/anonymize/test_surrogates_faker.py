"""Surrogates draw Faker's weighted first and last names with cumulative weights summed once: the same name as
Faker's own `first_name()` / `last_name()` for the same seed, and the same random state after it."""

from faker import Faker

from guardian_proxy.anonymize.surrogates import Surrogates, _weighted


def test_the_cached_draw_is_fakers_own_draw():
    fake = Faker("en_US")
    for seed in range(400):
        for method, table in (("first_name", "first_names"), ("last_name", "last_names")):
            fake.seed_instance(seed)
            theirs, after = getattr(fake, method)(), fake.random.random()
            fake.seed_instance(seed)
            ours = _weighted(fake, method, table)
            assert (ours, fake.random.random()) == (theirs, after)


def test_a_table_faker_does_not_weight_is_left_to_faker():
    fake = Faker("en_US")
    fake.seed_instance(7)
    theirs = fake.user_name()
    fake.seed_instance(7)
    assert _weighted(fake, "user_name", "no_such_table") == theirs


def test_surrogate_names_are_stable_for_a_seed():
    a = Surrogates("", seed=b"k").person("Anna Christou")
    b = Surrogates("", seed=b"k").person("Anna Christou")
    assert a == b and len(a.split()) == 2 and "Christou" not in a
