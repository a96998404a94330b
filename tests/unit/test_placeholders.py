"""guardian_proxy/placeholders.py: the stock examples that belong to no one, by a published reservation or by being
the textbook example; everything close to them that someone can hold stays personal."""

import pytest

from guardian_proxy.placeholders import local_ip, no_ones, placeholder_name, stock_email, stock_number


@pytest.mark.parametrize("text", ["user@example.com", "Test@Example.ORG", "john.doe@mail.example.net",
                                  "foo+tag@example.com", "alice@corp.example", "admin@site.test", "me@host.localhost",
                                  "noreply@x.invalid"])
def test_stock_addresses_at_reserved_domains(text):
    assert stock_email(text) and no_ones("EMAIL_ADDRESS", text)


@pytest.mark.parametrize("text", ["maria.gonzalez@example.com", "user@gmail.com", "user@example.co",
                                  "user@notexample.com", "user@example.com.evil.io", "user@", "@example.com"])
def test_other_addresses_are_someones(text):
    assert not stock_email(text)


def test_placeholder_names():
    assert placeholder_name("John Doe") and placeholder_name("jane  doe") and placeholder_name("Max Mustermann")
    assert not placeholder_name("John Dow") and not placeholder_name("Doe") and not placeholder_name("Jane")


@pytest.mark.parametrize("text", ["192.168.1.20", "10.0.0.5:8080", "172.16.4.1", "127.0.0.1", "::1", "fe80::1%eth0",
                                  "169.254.0.9", "0.0.0.0", "fd12:3456::1", "::ffff:192.168.0.1", "[::1]"])
def test_local_addresses(text):
    assert local_ip(text) and no_ones("IP_ADDRESS", text)


@pytest.mark.parametrize("text", ["8.8.8.8", "203.0.113.7", "198.51.100.64", "2001:db8::5", "100.64.0.1",
                                  "172.32.0.1", "not an ip"])
def test_public_and_documentation_addresses_are_not_local(text):
    assert not local_ip(text)


def test_stock_numbers():
    for text in ("123456789012", "000-00-0000", "9876543210", "8901234567", "111111", "111122223333", "111-222-333"):
        assert stock_number(text), text
    for text in ("12345", "4111 1111 1111 1111", "123456789013", "07700 900123", "2024-01-02"):
        assert not stock_number(text), text
    assert no_ones("PHONE_NUMBER", "123456789012") and not no_ones("DATE", "123456")


def test_an_organisations_role_mailbox_is_a_desks():
    from guardian_proxy.placeholders import role_mailbox

    for text in ("support@acme-widgets.com", "privacy+gdpr@bank.co.uk", "Info@Example-Shop.de", "no-reply@github.com"):
        assert role_mailbox(text), text
    for text in ("support@gmail.com", "info@yahoo.co.uk", "hello@hotmail.fr",  # somebody's account at a provider
                 "ana.ruiz@acme-widgets.com", "supporter@acme.com", "support"):
        assert not role_mailbox(text), text


def test_a_default_password_and_a_sample_address_belong_to_no_one():
    from guardian_proxy.placeholders import no_ones

    assert no_ones("PASSWORD", "app") and no_ones("PASSWORD", "changeme") and not no_ones("PASSWORD", "t7#Kq!92vX")
    assert no_ones("EMAIL_ADDRESS", "a+tag@example.com") and no_ones("EMAIL_ADDRESS", "test.user@example.org")
    assert not no_ones("EMAIL_ADDRESS", "natalie73@example.com")  # a given name at a reserved domain: someone's


def test_a_reference_to_a_secret_kept_elsewhere_or_a_mask_is_no_ones_password():
    from guardian_proxy.placeholders import stock_password

    for value in ("${DB_PASSWORD}", "${DB_PASSWORD", "$PGPASSWORD", "${PG_PASS:-changeme}", "%DB_PASS%", "{{ secrets.DB_PASSWORD }}",
                  "<your-password>", "********", "[REDACTED]"):
        assert stock_password(value), value
    for value in ("Tr0ub4dor&3", "hunter2!x", "$ecretP4ss"):
        assert not stock_password(value), value
