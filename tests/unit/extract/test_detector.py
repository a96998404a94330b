import threading

import pytest

from guardian_proxy.extract import health, keys, patterns, secrets
from guardian_proxy.extract.detector import Detector
from guardian_proxy.types import ENTITIES, TextField


def tf(text, key=None, path="json:$.x"):
    return TextField(path=path, text=text, key=key)


def found(hits, text):
    return {(e, text[s:t]) for s, t, e, _ in hits}


@pytest.fixture(scope="module")
def fast():
    return Detector(ner=False, quasi=False)


def test_field_names_are_context(fast):
    spans = fast.detect([tf("078051120", "ssn"), tf("12 345 678 901", "taxId"), tf("4242424242424242", "card[number]"),
                         tf("Maria Gonzalez", "name"), tf("Add to cart", "name"), tf("51.50740", "location_lat"),
                         tf("true", "email_opt_in"), tf("hunter2", "password"), tf("$remote", "ip"),
                         tf("1843029571.1718201820", "client_id"), tf("123-abc.apps.googleusercontent.com", "client_id")])
    got = [(s.path, s.entity, s.text) for s in spans]
    assert ("json:$.x", "US_SSN", "078051120") in got
    assert {s.entity for s in spans} == {"US_SSN", "GOVERNMENT_ID", "CREDIT_CARD", "PERSON", "LATLONG", "PASSWORD",
                                         "DEVICE_ID"}
    assert sum(s.entity == "PERSON" for s in spans) == 1 and sum(s.entity == "DEVICE_ID" for s in spans) == 1


def test_key_normalisation():
    assert keys.normalise("ep.user_email") == "user_email"
    assert keys.normalise("billing_details[address][postal_code]") == "postal_code"
    assert keys.normalise("firstName") == "first_name"
    assert keys.key_entity("ud[em]", "5f2b" * 16) == "EMAIL_ADDRESS"
    assert keys.cookie_entity("_ga_8XK2M4P1QZ") == "DEVICE_ID" and keys.cookie_entity("PHPSESSID") == "SESSION_ID"
    assert keys.cookie_entity("__Secure-next-auth.session-token") == "AUTH_TOKEN" and keys.cookie_entity("theme") is None


def test_project_keys_are_not_credentials_but_secrets_are():
    assert keys.key_entity("api_key", "7c1e8b2f9a0d4e6b8c3a5f7e9d1b2c4a") is None  # Amplitude project key
    assert keys.key_entity("api_key", "phc_9tq2Qx8W1mZ4kL7vN3bR5sD0fG6hJ2pA") is None  # PostHog public key
    assert keys.key_entity("access_token", "7c1e8b2f9a0d4e6b8c3a5f7e9d1b2c4a") == "AUTH_TOKEN"
    assert keys.key_entity("client_secret", "GOCSPX-Abc123") == "API_KEY"


def test_patterns_validate():
    text = ("card 4111 1111 1111 1111 and 4111 1111 1111 1112; IBAN GB82 WEST 1234 5698 7654 32 / GB82 WEST 1234 5698 "
            "7654 33; ssn 078-05-1120, 000-12-3456; ip 192.168.1.20 and 127.0.0.1; at 51.50740, -0.12780 and 95.1234,"
            " 10.1234; NHS no 943 476 5919; timestamps 1699999999")
    got = found(patterns.find(text), text)
    assert ("CREDIT_CARD", "4111 1111 1111 1111") in got and ("CREDIT_CARD", "4111 1111 1111 1112") not in got
    assert ("IBAN_CODE", "GB82 WEST 1234 5698 7654 32") in got
    assert not any(e == "IBAN_CODE" and v.endswith("33") for e, v in got)
    assert ("US_SSN", "078-05-1120") in got and ("US_SSN", "000-12-3456") not in got
    assert ("IP_ADDRESS", "192.168.1.20") in got and ("IP_ADDRESS", "127.0.0.1") not in got
    assert ("LATLONG", "51.50740, -0.12780") in got and not any(v.startswith("95.") for _, v in got)
    assert ("UK_NHS", "943 476 5919") in got


def test_an_ip_address_at_a_sentences_end_and_no_longer_dotted_number():
    """"404 from 190.237.14.82. Please fix": the full stop after it is its sentence's; "1.2.3.4.5" is a version."""
    text = "Logs show 404 from 190.237.14.82. Please fix. Build 1.2.3.4.5 and 10.1.2.3.4 are versions."
    got = found(patterns.find(text), text)
    assert ("IP_ADDRESS", "190.237.14.82") in got
    assert not any(e == "IP_ADDRESS" and v != "190.237.14.82" for e, v in got)


def test_phone_needs_shape_or_context(fast):
    spans = fast.detect([tf("order 1699999999 shipped"), tf("call me on 07700 900123 or +44 20 7946 0958")])
    assert [s.text for s in spans if s.entity == "PHONE_NUMBER"] == ["07700 900123", "+44 20 7946 0958"]


def test_credentials():
    text = ("sk-proj-abcdefghijklmnopqrstuvwxyz012345 AKIAIOSFODNN7EXAMPLE Authorization: Bearer abcdefghijklmnop.qrst "
            "my password is hunter2! https://bob:s3cret@db.example.com eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig "
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----")
    got = found(secrets.find(text), text)
    assert {e for e, _ in got} == {"API_KEY", "AUTH_TOKEN", "PASSWORD", "PRIVATE_KEY"}
    assert ("PASSWORD", "hunter2!") in got and ("PASSWORD", "s3cret") in got
    assert ("AUTH_TOKEN", "abcdefghijklmnop.qrst") in got
    cut = "x -----BEGIN RSA PRIVATE KEY-----\nMIIE" + "A" * 100
    assert secrets.private_keys(cut) == [(2, len(cut), "PRIVATE_KEY", 0.95)]


def test_health_terms():
    text = "I was diagnosed with type 2 diabetes last year; I take metformin 500 mg and have high blood pressure."
    got = found(health.find(text), text)
    assert ("MEDICAL_CONDITION", "type 2 diabetes") in got and ("MEDICATION", "metformin") in got
    assert ("MEDICATION", "500 mg") in got and ("MEDICAL_CONDITION", "high blood pressure") in got


def test_merge_keeps_one_span_per_value_and_drops_shadowed_hits(fast):
    spans = fast.detect([tf("4111 1111 1111 1111", "pan"), tf("DE89 3704 0044 0532 0130 00", "iban"),
                         tf("pregnancy test", "q", "query:q")])
    assert [(s.entity, s.text) for s in spans] == [
        ("CREDIT_CARD", "4111 1111 1111 1111"), ("IBAN_CODE", "DE89 3704 0044 0532 0130 00"),
        ("MEDICAL_CONDITION", "pregnancy"), ("SEARCH_QUERY", "pregnancy test")]
    for s in spans:
        assert ENTITIES[s.entity] == (s.category, s.direct)


def test_cookies_spans_and_no_ner_on_cookies(fast):
    spans = fast.detect([tf("GA1.2.1843029571.1718201820", "_ga", "cookie:_ga"), tf("dark", "theme", "cookie:theme")])
    assert [(s.entity, s.category) for s in spans] == [("DEVICE_ID", "device_id")]


def test_cache_and_threads():
    d = Detector(ner=False)
    fields = [tf(f"write to user{i}@example.com about order {i}", "note") for i in range(40)]
    first = [s.text for s in d.detect(fields)]
    out, errors = [], []

    def work():
        try:
            for _ in range(20):
                out.append([s.text for s in d.detect(fields)])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(o == first for o in out) and len(d._cache) <= d.cache_size


@pytest.mark.slow
def test_detector_ner_threads_and_budget():
    d = Detector(ner=True, quasi=False, max_ner_chars=60)
    fields = [tf("Please call John Smith back at john.smith@example.com today", "text"),
              tf("A second long free-text note about Maria Gonzalez that exceeds the budget", "note")]
    det = d.analyse(fields)
    assert "ner_budget" in det.flags
    assert ("PERSON", "John Smith") in {(s.entity, s.text) for s in det.spans}
    assert "Maria Gonzalez" not in {s.text for s in det.spans}
    results, errors = [], []

    def work(i):
        try:
            results.append({s.text for s in d.detect([tf(f"Please call John Smith back about invoice {i}", "note")])})
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 6 and all("John Smith" in r for r in results)


@pytest.mark.slow
def test_lazy_tagger_gives_the_narrative_pos_tags_when_it_needs_them():
    from guardian_proxy.extract.ner import NerEngine, _needs_pos

    d = Detector(ner=True)
    spans = d.detect([tf("My sister works as a nurse in Leeds and her husband is an accountant.", "note")])
    assert {("OCCUPATION", "nurse"), ("OCCUPATION", "accountant")} <= {(s.entity, s.text) for s in spans}
    engine = NerEngine()
    nlp = engine.load().nlp_engine.nlp["en"]
    assert "parser" not in nlp.pipe_names and "tagger" not in nlp.pipe_names and len(engine._tagging) == 3
    assert _needs_pos(nlp("the nurses were tired")) and not _needs_pos(nlp("the weather was fine"))


# ----------------------------------------------------------------------------- protocol fields are not personal data


def entities(det, fields):
    return {(s.path, s.entity, s.text) for s in det.detect(fields)}


def test_protocol_values_are_not_personal_data(fast):
    # a Luhn-valid random page id (GA4 `_p`) and a digit run under an id field: identifiers, not cards
    assert not fast.detect([tf("4929110384756216", key="_p", path="query:_p")])
    assert not fast.detect([tf("4111111111111111", key="requestId")])
    assert fast.detect([tf("4111111111111111", key="card[number]")])  # card fields stay cards
    assert fast.detect([tf("4111 1111 1111 1111", key="note")])
    # versions in a user agent and in client hints are not IP addresses; x.0.0.0 is a network
    ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
    assert not fast.detect([tf(ua, key="userAgent")])
    assert not fast.detect([tf("Not/A)Brand;8.0.0.0|Chromium;126.0.6478.126", key="uafvl")])
    assert fast.detect([tf("client at 203.0.113.47", key="note")])
    # a retina image name is not an e-mail address
    assert not fast.detect([tf("/img/tent-olive@2x.avif", key=None, path="path:")])
    # a locale under Meta's `ln`, a MIME type under `ct`, publishable and short keys
    assert not fast.detect([tf("en-us", key="ln", path="query:ln")])
    assert not fast.detect([tf("application/x-protobuf", key="$ct", path="query:$ct")])
    assert not fast.detect([tf("pk_9f3c1e7a5b2d4e6f8a0c1e3b5d7f9a2c", key="authorization")])
    assert not fast.detect([tf("pk.eyJ1IjoiZXhhbXBsZSIsImEiOiJjazEifQ.abc", key="access_token")])
    assert not fast.detect([tf("71245", key="token")])
    assert not fast.detect([tf("8f14e45f-ceea-467f-a0e6-b7d1c3f2e9a1", key="api_key")])  # Braze: a UUID app key
    assert fast.detect([tf("ghp_" + "a" * 36, key="note")])  # a real secret still is one


def test_mixpanel_and_mparticle_dollar_keys(fast):
    got = entities(fast, [tf("Jane", key="$FirstName"), tf("Doorwright", key="$LastName"),
                          tf("jane@examplemail.com", key="$email")])
    assert {e for _, e, _ in got} == {"PERSON", "EMAIL_ADDRESS"} and len(got) == 3


def test_a_value_identified_once_is_identified_everywhere_in_the_request(fast):
    got = entities(fast, [tf("1984-03-12", key="date_of_birth", path="json:$.date_of_birth"),
                          tf("1984-03-12", key="new", path="json:$.data.new")])
    assert {p for p, e, _ in got if e == "DATE_OF_BIRTH"} == {"json:$.date_of_birth", "json:$.data.new"}


@pytest.mark.slow
def test_software_names_are_not_groups():
    det = Detector(ner=True)
    spans = det.detect([tf("Chromium 156.0.8078.73 built on Debian GNU/Linux 12 (bookworm)", key="prodversion_note")])
    assert not [s for s in spans if s.entity in ("NRP", "ORGANIZATION") and "Debian" in s.text], spans


def test_a_google_oauth_client_secret_is_found_by_its_prefix():
    text = "client_secret in my config is 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"
    assert ("API_KEY", "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") in {(e, text[a:b]) for a, b, e, _ in secrets.find(text)}


def test_a_trunk_zero_in_brackets_and_a_short_area_code_are_phone_numbers():
    text = "Call +44 (0)7392 118405 or +49 (0)30 12873456, in Rome 06 4821 7733."
    got = found(patterns.find(text), text)
    assert {("PHONE_NUMBER", "+44 (0)7392 118405"), ("PHONE_NUMBER", "+49 (0)30 12873456"),
            ("PHONE_NUMBER", "06 4821 7733")} <= got


def test_a_urls_password_is_no_email_address():
    """"postgres://app_rw:Tz8!vQm2#pLw4Ks@db.internal:5432": the password's end and the host are no address (its
    stand-in had kept "Tz8!vQm2#" and changed the host)."""
    text = "DATABASE_URL=postgres://app_rw:Tz8!vQm2#pLw4Ks@db.internal:5432/shop; mail ann.smith@gmail.com"
    got = found(patterns.find(text), text)
    assert not any(e == "EMAIL_ADDRESS" and "db.internal" in v for e, v in got)
    assert ("EMAIL_ADDRESS", "ann.smith@gmail.com") in got


def test_a_password_written_right_after_its_word():
    """"login …, password Marmalade!Kite27." and a wifi's "password seagull-harbour-2291" had left as typed."""
    text = ("login a@b.co, password Marmalade!Kite27. wifi password seagull-harbour-2291. Reset your password by "
            "Friday; a password manager like 1Password.")
    got = {(e, v) for e, v in found(secrets.find(text), text) if e == "PASSWORD"}
    assert got == {("PASSWORD", "Marmalade!Kite27"), ("PASSWORD", "seagull-harbour-2291")}
