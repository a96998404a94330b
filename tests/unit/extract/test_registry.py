"""The recognizer registry (docs/design/extraction.md), context, validators, one resolver, provenance.

Each case named in the issue ("a JSON key alone decides a type for every destination", a card inside a timing
float, propagation into longer words, nothing records which rule found a span) runs through the Extractor with a
RawRequest, as the proxy hands it over."""

import hashlib
import json

import pytest

from guardian_proxy.decision_log import record
from guardian_proxy.extract import Extractor, validators
from guardian_proxy.extract.context import RequestContext, carrier
from guardian_proxy.extract.detector import Detector
from guardian_proxy.extract.registry import default_registry, natural_language
from guardian_proxy.extract.resolver import tracker_id_personal
from guardian_proxy.types import Decision, RawRequest, TextField

SHA = hashlib.sha256(b"jane.doe@example.com").hexdigest()
PIXEL = "https://www.facebook.com/tr/"  # Meta's pixel: recipient class ad_network, owner Facebook
OWN = "https://shop.example-store.com/api/state"  # the page's own backend (Origin: the same site)


@pytest.fixture(scope="module")
def ex():
    return Extractor(Detector(ner=False))


def post(url, data, origin="https://shop.example-store.com"):
    return RawRequest(method="POST", url=url, body=json.dumps(data).encode(),
                      headers=[("content-type", "application/json"), ("origin", origin)])


def spans(action):
    return {(s.path, s.entity): s for s in action.spans}


def entities(action):
    return {(s.path, s.entity) for s in action.spans}


# ------------------------------------------------------------------ keys raise or lower, never decide alone


def test_meta_vocabulary_applies_to_the_vendor_only(ex):
    data = {"em": SHA, "ph": "15551234567", "st": "ca", "db": "19800131", "ge": "f"}
    to_pixel = ex.extract(post(PIXEL, data))
    assert to_pixel.recipient in ("ad_network", "social")
    got = entities(to_pixel)
    assert {("json:$.em", "EMAIL_ADDRESS"), ("json:$.st", "LOCATION"), ("json:$.db", "DATE_OF_BIRTH"),
            ("json:$.ge", "GENDER")} <= got
    sp = spans(to_pixel)[("json:$.em", "EMAIL_ADDRESS")]
    assert sp.recognizer == "key" and sp.reason == "key:em+validator"
    own = ex.extract(post(OWN, data))
    assert own.recipient == "first_party"
    assert not {e for _, e in entities(own)} & {"EMAIL_ADDRESS", "LOCATION", "DATE_OF_BIRTH", "GENDER", "PERSON"}


def test_a_key_needs_a_value_of_its_type(ex):
    # seen on real traffic: timing floats under `em`/`st`, a deployment name under `db`
    a = ex.extract(post(PIXEL, {"em": "52.123", "st": "52.123", "db": "prod", "ph": "52.123", "fn": "test"}))
    assert not {e for _, e in entities(a)} & {"EMAIL_ADDRESS", "LOCATION", "DATE_OF_BIRTH", "PHONE_NUMBER", "PERSON"}


def test_a_name_key_needs_a_persons_name(ex):
    a = ex.extract(post(OWN, {"integrations": [{"name": "Facebook Pixel"}, {"name": "Google Tag Manager"}],
                              "profile": {"name": "Maria Gonzalez"}, "tool": {"name": "Respond"},
                              "first_name": "test"}))
    people = [s for s in a.spans if s.entity == "PERSON"]
    assert [(s.path, s.text) for s in people] == [("json:$.profile.name", "Maria Gonzalez")]
    assert people[0].recognizer == "key" and "validator" in people[0].reason


def test_a_key_that_agrees_raises_the_recognizer_and_one_span_results(ex):
    a = ex.extract(post(OWN, {"email": "jane.doe@example.com", "ssn": "078-05-1120"}))
    email = [s for s in a.spans if s.path == "json:$.email"]
    assert len(email) == 1 and email[0].recognizer == "pattern:email" and "key:email" in email[0].reason
    assert email[0].score == 1.0
    ssn = [s for s in a.spans if s.path == "json:$.ssn"]  # found by pattern and key: one span, one type
    assert [(s.entity, s.recognizer) for s in ssn] == [("US_SSN", "pattern:us_ssn")]


# ------------------------------------------------------------------ numbers are not cards


def test_no_card_inside_a_decimal_number(ex):
    card = "4111111111111111"
    req = RawRequest(method="GET", url=f"https://shop.example-store.com/rum?t=52.{card}&v={card}.5&msg=paid+with+{card}",
                     headers=[("origin", "https://shop.example-store.com")])
    a = ex.extract(req)
    cards = [s.path for s in a.spans if s.entity == "CREDIT_CARD"]
    assert cards == ["query:msg"]  # the card number on its own still counts
    b = ex.extract(post(OWN, {"timing": {"duration": 4111111111111111, "load_ms": "4111111111111111"},
                              "perf": 52.4111111111111111, "note": f"paid with {card}"}))
    assert [s.path for s in b.spans if s.entity == "CREDIT_CARD"] == ["json:$.note"]


def test_digit_entities_inside_longer_runs_are_dropped():
    det = Detector(ner=False, quasi=False)
    got = det.detect([TextField(path="text:", text="ids 0.5551234567 and 1.078-05-1120 then 078-05-1120")])
    assert [(s.entity, s.text) for s in got] == [("US_SSN", "078-05-1120")]


# ------------------------------------------------------------------ propagation is word-bounded


def test_propagation_is_word_bounded_and_says_where_from(ex):
    a = ex.extract(post(OWN, {"username": "jsmith", "msg": "jsmithson wrote to jsmith about 1980-01-311",
                              "date_of_birth": "1980-01-31"}))
    prop = [s for s in a.spans if s.recognizer == "propagated"]
    assert [(s.path, s.text) for s in prop] == [("json:$.msg", "jsmith")]
    assert prop[0].start == a.fields[[f.path for f in a.fields].index("json:$.msg")].text.index("jsmith ")
    assert prop[0].reason.startswith("from json:$.username")


# ------------------------------------------------------------------ tracker identifiers: one rule


def test_tracker_identifiers_are_personal_only_to_trackers(ex):
    data = {"anonymous_id": "0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d", "device_id": "2b7f4e1a-9c3d-4a5b-8e6f-0a1b2c3d4e5f"}
    own = ex.extract(post(OWN, data))
    assert not [s for s in own.spans if s.entity in ("DEVICE_ID", "ADVERTISING_ID")]
    tracker = ex.extract(post("https://api.segment.io/v1/t", data))
    assert tracker.recipient in ("analytics", "ad_network", "data_broker", "social")
    assert {s.entity for s in tracker.spans} == {"DEVICE_ID"}
    assert tracker_id_personal(None) and tracker_id_personal("analytics") and tracker_id_personal("ad_network")
    for cls in ("first_party", "service_provider", "ai_service", "unknown_third_party"):
        assert not tracker_id_personal(cls), cls


def test_session_ids_and_home_pages_are_not_personal(ex):
    # seen on real traffic: an analytics session UUID to a party not in the tables was rewritten; a page
    # `…/home/index.html` in a Referer was taken for the home directory of a user "index.html"
    req = RawRequest(method="POST", url="https://collect.unknown-vendor-example.net/list",
                     body=json.dumps({"session_id": "0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d", "rx": "DWLSSz5Q dMc9vy"}).encode(),
                     headers=[("content-type", "application/json"), ("origin", "https://news.example.co.uk"),
                              ("referer", "https://news.example.co.uk/home/index.html")])
    a = ex.extract(req)
    assert a.recipient == "unknown_third_party" and a.spans == []
    b = ex.extract(post(OWN, {"file": "/home/rahul/Documents/x.docx", "rx": "metformin 500mg"}))
    assert {(s.entity, s.text) for s in b.spans} == {("USERNAME", "rahul"), ("MEDICATION", "metformin 500mg")}
    # replay: an analytics page name `pageName=/home/home` (a site's section) was a user "home": the call was blocked
    c = ex.extract(RawRequest(method="GET", url="http://wa.analytics-example.co.uk/b/ss/x/1/H.26/s5?pageName=%2Fhome"
                              "%2Fhome&c13=%2Fnews%2Fhome", headers=[("referer", "https://news.example.co.uk/")]))
    assert c.spans == []


def test_a_short_token_under_a_generic_name_is_a_project_key(ex):
    req = RawRequest(method="GET", url="https://fonts.example-cdn.net/css?family=Inter&token=kA82XpP0NvvXamhoFUNdJ6K5HUSZ9gN_jEusJZqM",
                     headers=[("referer", "https://www.example-news.com/")])
    assert not [s for s in ex.extract(req).spans if s.entity in ("AUTH_TOKEN", "API_KEY")]
    own = ex.extract(post(OWN, {"access_token": "kA82XpP0NvvXamhoFUNdJ6K5HUSZ9gN_jEusJZqM"}))
    assert [s.entity for s in own.spans] == ["AUTH_TOKEN"]  # a specific name is always a credential


def test_digests_only_to_matchers(ex):
    to_pixel = ex.extract(post(PIXEL, {"ud": {"x": SHA}}))
    assert [(s.entity, s.recognizer) for s in to_pixel.spans] == [("HASHED_IDENTIFIER", "digest")]
    assert not ex.extract(post(OWN, {"ud": {"x": SHA}})).spans


# ------------------------------------------------------------------ the registry and the context


def test_registry_names_are_stable():
    names = default_registry().names()
    for n in ("pattern:email", "pattern:credit_card", "pattern:us_ssn", "pattern:iban", "secret:api_key",
              "secret:token", "secret:password", "secret:private_key", "health", "narrative", "key", "cookie",
              "digest"):
        assert n in names
    assert len(names) == len(set(names))
    assert "ner" in Detector(ner=True).registry.names() and "ner" not in Detector(ner=False).registry.names()


def test_carrier_from_the_path():
    assert carrier("query:uid") == "query" and carrier("json:$.a") == "body_json" and carrier("form:a") == "body_form"
    assert carrier("cookie:_ga") == "cookie" and carrier("header:x-user") == "header" and carrier("host:") == "host"
    assert carrier("json:$.a", websocket=True) == "websocket" and carrier("form:f>file>text:") == "file"


@pytest.mark.parametrize("text,free", [
    ("Hi, my name is Jane and I live in Leeds", True),
    ("0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d", False),
    ("https://www.example.com/a/b?c=d", False),
    ("52.1234567890123", False),
    ("eyJhbGciOiJIUzI1NiJ9 eyJzdWIiOiIxMjM0In0", False),
    ("a1b2c3d4e5f6 a7b8c9d0e1f2 33445566", False),
    ("page_view", False),
])
def test_ner_runs_only_on_natural_language(text, free):
    assert natural_language(text, None) is free


def test_validators():
    assert validators.email("jane@example.com") and not validators.email("52.123")
    assert validators.plausible_date("1980-01-31") and validators.plausible_date("19800131")
    assert validators.plausible_date("31/01/1980") and validators.plausible_date("Jan 31, 1980")
    assert not validators.plausible_date("prod") and not validators.plausible_date("2999-01-01")
    assert not validators.plausible_date("52.123")
    assert validators.person_name("Maria Gonzalez") and validators.person_name("Sally Field")
    for v in ("Facebook Pixel", "Google Tag Manager", "Add to cart", "Respond", "agent2", "test", "Sign in"):
        assert not validators.person_name(v), v
    assert validators.location("Leeds") and validators.location("97403") and not validators.location("52.123")
    assert validators.card("4111 1111 1111 1111") and not validators.card("4111 1111 1111 1112")
    assert validators.valid("EMAIL_ADDRESS", SHA) and validators.valid("AMOUNT", "3") is None
    assert validators.vendor_destination("ad_network", None) and not validators.vendor_destination("first_party", None)
    assert validators.vendor_destination(None, "ByteDance") and validators.vendor_destination(None, None) is None


def test_context_none_keeps_todays_callers():
    det = Detector(ner=False, quasi=False)
    got = det.detect([TextField(path="json:$.ud.em", text=SHA, key="em")])
    assert [s.entity for s in got] == ["EMAIL_ADDRESS"]  # destination not known: the conservative side
    got = det.analyse([TextField(path="json:$.em", text=SHA, key="em")],
                      context=RequestContext(recipient="first_party")).spans
    assert got == []


# ------------------------------------------------------------------ provenance: log and dashboard


def test_provenance_in_the_decision_log_and_the_detail(ex):
    from guardian_proxy.dashboard.detail import detail_of

    req = post(PIXEL, {"em": SHA, "email": "jane.doe@example.com", "msg": "write to jane.doe@example.com"})
    a = ex.extract(req)
    d = Decision(action="deny", six=a)
    rec = record(req, d)
    found = {(f["at"], f["by"]) for f in rec["found"]}
    assert ("json:$.em", "key") in found and ("json:$.email", "pattern:email") in found
    assert ("json:$.msg", "propagated") in found or ("json:$.msg", "pattern:email") in found
    line = json.dumps(rec)
    assert "jane.doe" not in line and SHA not in line  # never a value
    det = detail_of(req, d)
    assert det["found"] and any("json:$.em" in x and "key:em+validator" in x for x in det["found_lines"])
    assert "jane.doe" not in json.dumps(det) and SHA not in json.dumps(det)


@pytest.mark.slow
def test_ner_person_is_not_a_product_or_an_agent():
    det = Detector()
    fields = [TextField(path="json:$.messages[0].content",
                        text="Respond to agent2 and ask Maria Gonzalez whether the Facebook Pixel fires on checkout.")]
    people = [s for s in det.detect(fields) if s.entity == "PERSON"]
    assert [s.text for s in people] == ["Maria Gonzalez"]
    assert people[0].recognizer == "ner" and people[0].reason.startswith("ner:spacy PERSON")


def test_ids_that_are_not_postcodes_and_own_account_ids(ex):
    # seen on real traffic: `id=ABC-AB12CD` rewritten to `ABC-[LOCATION]`; a telemetry `userId` to the site itself
    req = RawRequest(method="GET", url="https://shop.example-store.com/p?id=ABC-AB12CD&ref=SW1A+1AA",
                     headers=[("origin", "https://shop.example-store.com")])
    assert [(s.path, s.entity) for s in ex.extract(req).spans] == [("query:ref", "LOCATION")]
    own = ex.extract(post(OWN, {"userId": "w: 1136", "user_id": "8f3a2b1c9d"}))
    assert [s for s in own.spans if s.entity == "USER_ID"] == []
    tracker = ex.extract(post("https://api.segment.io/v1/t", {"userId": "8f3a2b1c9d"}))
    assert [s.entity for s in tracker.spans] == ["USER_ID"]


def test_ner_names_with_other_characters_and_acronyms_in_requests():
    """Replay: a page title "Disney+ Hotstar - Watch TV Shows" became [PERSON]; an analytics event's "SSE finish"
    became [ORGANIZATION]."""
    from guardian_proxy.extract.context import field_context
    from guardian_proxy.extract.registry import Result
    from guardian_proxy.extract.resolver import resolve

    title = TextField(path="json:$.context.page.title", key="title", text="Disney+ Hotstar - Watch TV Shows")
    hit = [Result(0, 32, "PERSON", 0.85, "ner", "ner:spacy PERSON 0.85")]
    assert resolve(title, hit, field_context(title, RequestContext(recipient="first_party"))) == []
    name = TextField(path="json:$.note", key="note", text="Call Maria Gonzalez")
    got = resolve(name, [Result(5, 19, "PERSON", 0.85, "ner", "ner")], None)
    assert [s.text for s in got] == ["Maria Gonzalez"]
    msg = TextField(path="json:$.params>$.event_message", key="event_message", text="SSE finish")
    org = [Result(0, 3, "ORGANIZATION", 0.85, "ner", "ner:spacy ORGANIZATION 0.85")]
    assert resolve(msg, org, field_context(msg, RequestContext(recipient="unknown_third_party"))) == []
    # outside a request (texts, the anonymizer's callers) an acronym is left to the other rules
    assert [s.text for s in resolve(msg, org, None)] == ["SSE"]


def test_a_sites_own_account_and_a_vendors_key_in_its_url(ex):
    """Replay: a follow button's `screen_name=HuffingtonPost` beside `twttr_referrer=http://www.huffingtonpost.com/`
    was masked as the user's name; a video player's read token in its API URL (api.brightcove.com) blocked the
    call as credentials."""
    widget = ex.extract(RawRequest(method="GET", headers=[("referer", "https://platform.twitter.com/widgets/b.html")],
                                   url="https://p.twitter.com/f.gif?screen_name=HuffingtonPost&show_screen_name=true"
                                       "&twttr_referrer=http%3A%2F%2Fwww.huffingtonpost.com%2F"))
    assert not [s for s in widget.spans if s.entity == "USERNAME"]
    user = ex.extract(RawRequest(method="GET", headers=[("referer", "https://platform.twitter.com/widgets/b.html")],
                                 url="https://p.twitter.com/f.gif?screen_name=maria_lindqvist"
                                     "&twttr_referrer=http%3A%2F%2Fwww.huffingtonpost.com%2F"))
    assert [s.text for s in user.spans if s.entity == "USERNAME"] == ["maria_lindqvist"]
    page = [("referer", "https://www.news-example.com/video"), ("sec-fetch-site", "cross-site")]
    vendor = ex.extract(RawRequest(method="GET", headers=page,
                                   url="https://api.brightcove.com/services/library?command=find_playlist&token="
                                       "kA82XpP0NvvXamhoFUNdJ6K5HUSZ9gN_jEusJZqMp3m."))
    assert vendor.recipient == "service_provider" and vendor.spans == []
    # the same token in a body to that vendor is still a credential
    body = ex.extract(RawRequest(method="POST", headers=page + [("content-type", "application/json")],
                                 url="https://api.brightcove.com/services/library",
                                 body=b'{"token": "kA82XpP0NvvXamhoFUNdJ6K5HUSZ9gN_jEusJZqMp3m."}'))
    assert [s.entity for s in body.spans] == ["AUTH_TOKEN"]


def test_a_pasted_invoice_with_dot_leaders_is_text():
    """A garage's quote ("- MOT ........ £54.85"): its runs of dots had made it no text, so the car's registration
    and VIN after their labels were never read."""
    from guardian_proxy.extract.registry import natural_language

    text = ("Customer: Natalia Ferreira-Santos   Tel: 07480 319 522\nVehicle reg: KX16 HVT   VIN: WF0AXXGCDAGU48317\n"
            "- Timing belt kit ........................ £389.00\n- MOT ..................................... £54.85\n")
    assert natural_language(text, None)
    assert not natural_language("................ 1234 ---- 5678 ......", None)
