"""Bad input never escapes the extract stage: each case yields a six-tuple with a stated flag."""

import gzip
import json

import brotli
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guardian_proxy.bodies import BodyLimits
from guardian_proxy.extract import Extractor
from guardian_proxy.extract.detector import Detection, Detector
from guardian_proxy.types import RawRequest

LIMITS = BodyLimits(max_body_bytes=1_000_000, max_decoded_bytes=2_000_000, max_json_depth=32, max_field_chars=5_000)


@pytest.fixture(scope="module")
def ex():
    return Extractor(Detector(ner=False), LIMITS)


def post(body, ctype="application/json", url="https://collector.example.com/v1/events", **headers):
    h = [("content-type", ctype)] if ctype else []
    return RawRequest(method="POST", url=url, headers=h + [(k.replace("_", "-"), v) for k, v in headers.items()],
                      body=body)


BAD = [
    ("truncated_json", post(b'{"user": {"email": "a@b.com", "name": "Jo'), {"unparsed", "invalid_json", "truncated"},
     "unparsed"),
    ("invalid_json", post(b"{'single': quotes}"), {"unparsed", "invalid_json"}, "unparsed"),
    ("json_sent_as_form", post(b'{"email": "a@b.com"}', "application/x-www-form-urlencoded"),
     {"content_type_mismatch"}, "json"),
    ("form_sent_as_json", post(b"email=a%40b.com&x=1"), {"content_type_mismatch"}, "form"),
    ("deep_json", post(b'{"a":' * 100 + b'"x"' + b"}" * 100), {"depth_limit", "unparsed"}, "json"),
    ("recursion_bomb", post(b"[" * 200_000 + b"]" * 200_000), {"depth_limit", "unparsed"}, "unparsed"),
    ("gzip_bomb", post(gzip.compress(b" " * 5_000_000), content_encoding="gzip"),
     {"too_large", "decompression_limit"}, "too_large"),
    ("br_bomb", post(brotli.compress(b" " * 5_000_000), content_encoding="br"),
     {"too_large", "decompression_limit"}, "too_large"),
    ("zstd_bomb", post(zstandard.ZstdCompressor().compress(b" " * 5_000_000), content_encoding="zstd"),
     {"too_large", "decompression_limit"}, "too_large"),
    ("corrupt_gzip", post(b"\x1f\x8b\x08garbage", content_encoding="gzip"), {"unparsed", "bad_encoding"}, "unparsed"),
    ("unknown_encoding", post(b"abc", content_encoding="snappy"), {"unparsed", "bad_encoding"}, "unparsed"),
    ("too_large", post(b"x" * 1_000_001, "text/plain"), {"too_large"}, "too_large"),
    ("huge_field", post(json.dumps({"note": "call me at +44 20 7946 0958 " + "x" * 10_000}).encode()),
     {"truncated"}, "json"),
    ("invalid_utf8_text", post(b"\xff\xfe\xfa\x00\x01garbage", "text/plain"), {"unparsed", "invalid_utf8"},
     "unparsed"),
    ("mostly_utf8_json", post(b'{"email": "a@b.com", "city": "K\xf6ln"}'), {"invalid_utf8"}, "json"),
    ("duplicate_keys", post(b'{"email": "decoy@x.com", "email": "real@b.com"}'), {"duplicate_keys"}, "json"),
    ("binary_octets", post(b"\x00\x01\x02\x03\xff", "application/octet-stream"), {"binary"}, "binary"),
    ("multipart_no_boundary", post(b"--x\r\n\r\nhi", "multipart/form-data"), {"unparsed", "no_boundary"},
     "unparsed"),
    ("multipart_cut_off", post(b'--b\r\nContent-Disposition: form-data; name="t"\r\n\r\nJohn Sm',
                               "multipart/form-data; boundary=b"), {"truncated"}, "multipart"),
]


@pytest.mark.parametrize("name,req,flags,fmt", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_flagged(ex, name, req, flags, fmt):
    a = ex.extract(req)
    assert flags <= set(a.flags), a.flags
    assert a.body_format == fmt
    assert a.domain == "example.com" and a.recipient and a.purposes and a.basis


def test_hidden_duplicate_value_is_still_detected(ex):
    a = ex.extract(BAD[15][1])
    assert {s.text for s in a.spans} == {"decoy@x.com", "real@b.com"}


def test_truncated_and_huge_fields_still_yield_spans(ex):
    assert {s.text for s in ex.extract(BAD[0][1]).spans} >= {"a@b.com"}
    assert {s.entity for s in ex.extract(BAD[12][1]).spans} >= {"PHONE_NUMBER"}


def test_odd_urls_and_headers(ex):
    for url in ("http://[::1]:11434/api/chat", "https://xn--bcher-kva.example/ü?q=%ff%fe", "https://a.example.com",
                "https://a.example.com/?&&=&a", "http://localhost/" + "%" * 100):
        a = ex.extract(RawRequest(method="GET", url=url, headers=[("cookie", ";;=;a=b=c; ; x"), ("origin", "::::")]))
        assert "extract_error" not in a.flags and a.domain


def test_detector_failure_falls_back_to_patterns():
    class Broken(Detector):
        def analyse(self, fields, ner=None, context=None):
            if ner is not False:
                raise RuntimeError("model crashed")
            return super().analyse(fields, ner=False, context=context)

    a = Extractor(Broken(ner=False)).extract(post(b'{"email": "a@b.com"}'))
    assert "ner_error" in a.flags and [s.text for s in a.spans] == ["a@b.com"]


def test_a_spacy_model_that_fails_to_load_is_not_reloaded_per_request():
    det = Detector(spacy_model="no_such_spacy_model")
    ex = Extractor(det)
    body = b'{"note": "Please write to John Smith at a@b.com about the meeting tomorrow."}'
    for _ in range(2):
        a = ex.extract(post(body))
        assert "ner_error" in a.flags and "a@b.com" in [s.text for s in a.spans]
    failed = det._ner._failed
    assert failed is not None
    det._ner._build = lambda: pytest.fail("the failed load was retried")
    assert "ner_error" in ex.extract(post(body)).flags and det._ner._failed is failed


def test_unexpected_error_yields_a_flagged_tuple(monkeypatch):
    ex = Extractor(Detector(ner=False))
    monkeypatch.setattr(ex, "_extract", lambda req: 1 / 0)
    a = ex.extract(post(b"{}"))
    assert a.flags == ["extract_error", "unparsed"] and a.domain == "example.com"


CTYPES = st.sampled_from([None, "application/json", "text/plain", "application/x-www-form-urlencoded",
                          "multipart/form-data; boundary=b", "application/graphql", "application/x-ndjson",
                          "image/png", "application/json; charset=latin-1", "text/plain; charset=nope"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=600), st.text(max_size=600).map(str.encode),
                      st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                                   lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c,
                                                                                       max_size=4),
                                   max_leaves=20).map(lambda v: json.dumps(v).encode())),
       ctype=CTYPES, enc=st.sampled_from([None, "gzip", "br", "identity", "gzip, br", "bogus"]),
       cookie=st.text(max_size=60))
def test_fuzz_never_raises(ex, body, ctype, enc, cookie):
    headers = [("cookie", cookie)] if cookie.isprintable() else []
    if ctype:
        headers.append(("content-type", ctype))
    if enc:
        headers.append(("content-encoding", enc))
    a = ex.extract(RawRequest(method="POST", url="https://t.example.org/c?x=1", headers=headers, body=body))
    assert "extract_error" not in a.flags
    for s in a.spans:
        f = next(f for f in a.fields if f.path == s.path)
        assert f.text[s.start:s.end] == s.text


def test_detection_type_is_exported():
    assert Detection().spans == [] and Detection().flags == []


def test_unreadable_body_is_never_rebuilt(ex):
    from guardian_proxy.bodies import write_back
    from guardian_proxy.errors import BodyError

    a = ex.extract(post(b"x" * 1_000_001, "text/plain", url="https://c.example.com/u/a%40b.com?e=a%40b.com"))
    paths = [f.path for f in a.fields]  # the first part is read (padding hides nothing), but no path: field
    assert "too_large" in a.flags and "path:" not in paths and "query:e" in paths
    with pytest.raises(BodyError):
        write_back(a._parsed, {"query:e": "x", "path:": "/u/x"})
    ok = ex.extract(post(b'{"a": 1}', url="https://c.example.com/u/a%40b.com"))
    assert [s.entity for s in ok.spans] == ["EMAIL_ADDRESS"] and ok.spans[0].path == "path:"
    assert write_back(ok._parsed, {"path:": "/u/x"}) == b'{"a": 1}'
