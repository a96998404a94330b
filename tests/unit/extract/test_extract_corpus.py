"""The request corpus (tests/fixtures/requests): every field of the six-tuple, per request, and a
write-back round trip through every body format the corpus holds."""

import importlib.util
import re
import uuid
from pathlib import Path

import pytest

from guardian_proxy.bodies import (
    parse_body,
    parse_cookies,
    parse_query,
    rewrite_cookies,
    rewrite_url,
    write_back,
)
from guardian_proxy.extract import Extractor
from guardian_proxy.extract.detector import Detector

_spec = importlib.util.spec_from_file_location(
    "request_fixtures", Path(__file__).resolve().parents[2] / "fixtures" / "requests" / "loader.py")
fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixtures)

CORPUS = fixtures.load_all()
IDS = [name for name, _, _ in CORPUS]
SIX = ("domain", "site", "recipient", "owner", "purposes", "basis", "body_format", "flags")


@pytest.fixture(scope="module")
def fast():
    return Extractor(Detector(ner=False, quasi=False))


def _spans(action):
    return [[s.path, s.entity, s.text] for s in action.spans]


def test_corpus_is_large_and_complete():
    assert len(CORPUS) >= 40
    for name, _, exp in CORPUS:
        assert {"domain", "recipient", "purposes", "basis", "categories", "text", "spans"} <= set(exp), name
    kinds = {exp["body_format"] for _, _, exp in CORPUS}
    assert {"json", "form", "multipart", "graphql", "ndjson", "none", "binary"} <= kinds
    assert {exp["recipient"] for _, _, exp in CORPUS} >= {"first_party", "service_provider", "analytics", "ad_network",
                                                           "social", "data_broker", "ai_service", "unknown_third_party"}
    assert {exp["basis"] for _, _, exp in CORPUS} == {"user", "default", "background"}
    assert any(req.header("content-encoding") for _, req, _ in CORPUS)


@pytest.mark.parametrize("name,req,exp", CORPUS, ids=IDS)
def test_six_tuple(fast, name, req, exp):
    a = fast.extract(req)
    for key in SIX:
        assert getattr(a, key) == exp[key], f"{name}: {key}"
    assert a.host == req.host
    assert {f.path: f.text for f in a.fields} == exp["text"], f"{name}: outgoing text"
    assert a.categories == exp["categories"], f"{name}: categories"
    assert _spans(a) == exp["spans"], f"{name}: spans"
    for s in a.spans:  # every span points at its own text
        field = next(f for f in a.fields if f.path == s.path)
        assert field.text[s.start:s.end] == s.text


@pytest.mark.slow
@pytest.mark.parametrize("name,req,exp", CORPUS, ids=IDS)
def test_six_tuple_with_ner(name, req, exp, ner_extractor):
    a = ner_extractor.extract(req)
    want = exp.get("ner", exp)
    for key in SIX:
        assert getattr(a, key) == exp[key], f"{name}: {key}"
    assert a.categories == want["categories"], f"{name}: categories"
    assert _spans(a) == want["spans"], f"{name}: spans"


@pytest.fixture(scope="module")
def ner_extractor():
    return Extractor(Detector(ner=True, quasi=False))


@pytest.mark.parametrize("name,req,exp", CORPUS, ids=IDS)
def test_narrative_never_hides_a_direct_identifier(fast, name, req, exp):
    with_quasi = Extractor(Detector(ner=False, quasi=True)).extract(req)
    base = fast.extract(req)
    assert [getattr(with_quasi, k) for k in SIX] == [getattr(base, k) for k in SIX]
    for s in base.spans:
        if s.direct:
            assert any(q.path == s.path and q.category == s.category and q.start <= s.start and s.end <= q.end
                       for q in with_quasi.spans), f"{name}: {s.entity} {s.text!r}"


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _replacement(text: str) -> str:
    """A stand-in of the value's own shape, as a rewrite writes it: a UUID stays a UUID and a number a number (the
    write-back keeps both formats whatever replaces them), any other value a marker of its length."""
    if _UUID.fullmatch(text):
        return str(uuid.uuid5(uuid.NAMESPACE_URL, text))
    if _NUMBER.fullmatch(text):
        return "".join(str((int(c) + 1) % 10 or 9) if c.isdigit() else c for c in text)
    return f"<{len(text)}:{text[::-1][:12]}>"


@pytest.mark.parametrize("name,req,exp", CORPUS, ids=IDS)
def test_every_field_writes_back_in_its_own_format(fast, name, req, exp):
    a = fast.extract(req)
    repl = {f.path: _replacement(f.text) for f in a.fields if f.text}
    parsed = a._parsed
    if parsed.fields:
        body = write_back(parsed, repl)
        again = parse_body(body, req.header("content-type"), None, parsed.limits)
        assert again.format == parsed.format
        got = {f.path: f.text for f in again.fields}
        for f in parsed.fields:
            assert got[f.path] == repl.get(f.path, f.text), f"{name}: {f.path}"
        assert [x.size for x in again.files] == [x.size for x in parsed.files]
    url = rewrite_url(req.url, repl)
    want = {f.path: repl.get(f.path, f.text) for f in parse_query(req.url)}
    assert {f.path: f.text for f in parse_query(url)} == want
    cookie = req.header("cookie")
    if cookie:
        new = rewrite_cookies(cookie, repl)
        assert {f.path: f.text for f in parse_cookies(new)} == {f.path: repl.get(f.path, f.text)
                                                                for f in parse_cookies(cookie)}
