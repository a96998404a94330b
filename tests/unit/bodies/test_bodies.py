import base64
import gzip
import hashlib
import json

import pytest

from guardian_proxy import bodies
from guardian_proxy.bodies import BodyLimits, parse_body, write_back
from guardian_proxy.errors import BodyError

LIM = BodyLimits()


def fields(p):
    return {f.path: f.text for f in p.fields}


def test_json_paths_and_write_back():
    body = json.dumps({"user": {"email": "a@b.com", "first name": "Ann", "age": 41}, "items": [{"n": "x"}],
                       "ok": True}).encode()
    p = parse_body(body, "application/json", None, LIM)
    paths = fields(p)
    assert paths["json:$.user.email"] == "a@b.com"
    assert paths["json:$.user['first name']"] == "Ann"
    assert paths["json:$.items[0].n"] == "x"
    assert paths["json:$.user.age"] == "41"
    out = json.loads(write_back(p, {"json:$.user['first name']": "[PERSON_1]", "json:$.user.age": "40",
                                    "json:$.user.email": "x"}))
    assert out == {"user": {"email": "x", "first name": "[PERSON_1]", "age": 40}, "items": [{"n": "x"}], "ok": True}


def test_json_path_roundtrip_odd_keys():
    parts = ("a.b", 3, "it's", "x y", "ok")
    assert bodies.parse_json_path(bodies.json_path(parts)) == parts


def test_untouched_body_is_returned_byte_for_byte():
    body = b'{ "a" : "x",\n  "b": 1.50 }'
    p = parse_body(body, "application/json", None, LIM)
    assert write_back(p, {"json:$.nope": "y", "query:a": "z"}) == body


def test_form_write_back_keeps_duplicates_and_raw_bytes():
    p = parse_body(b"q=john+smith&tag=a&tag=b", "application/x-www-form-urlencoded", None, LIM)
    assert [f.path for f in p.fields] == ["form:q", "form:tag", "form:tag#1"]
    assert write_back(p, {"form:q": "[PERSON_1]", "form:tag#1": "c"}) == b"q=%5BPERSON_1%5D&tag=a&tag=c"
    p = parse_body(b"a=%7e%20x;&flag&b=1", "application/x-www-form-urlencoded", None, LIM)
    assert write_back(p, {"form:b": "2"}) == b"a=%7e%20x;&flag&b=2"


def test_query_cookies_and_path():
    assert [(f.path, f.text) for f in bodies.parse_query("https://x.com/c?uid=42&e=a%40b.com")] == [
        ("query:uid", "42"), ("query:e", "a@b.com")]
    assert bodies.rewrite_url("https://x.com/c?uid=42&e=z", {"query:uid": "0"}) == "https://x.com/c?uid=0&e=z"
    assert bodies.rewrite_url("https://x.com/u/a%40b.com/x?k=1#f", {"path:": "/u/[E 1]/x"}) == \
        "https://x.com/u/%5BE%201%5D/x?k=1#f"
    cookies = bodies.parse_cookies("sid=abc; _ga=GA1.2.3; flag")
    assert [f.path for f in cookies] == ["cookie:sid", "cookie:_ga"]
    assert bodies.rewrite_cookies("sid=abc; _ga=GA1.2.3; flag", {"cookie:_ga": "x"}) == "sid=abc; _ga=x; flag"


def test_query_value_holding_json():
    url = "https://x.com/graphql?operationName=S&variables=%7B%22term%22%3A%22jo%20smith%22%7D"
    assert {f.path: f.text for f in bodies.parse_query(url)}["query:variables>$.term"] == "jo smith"
    new = bodies.rewrite_url(url, {"query:variables>$.term": "[P]"})
    assert {f.path: f.text for f in bodies.parse_query(new)}["query:variables>$.term"] == "[P]"


def test_multipart_text_parts_files_and_write_back():
    body = (b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"comment\"\r\nContent-Length: 15\r\n\r\n"
            b"Hello from John\r\n--XyZ\r\nContent-Disposition: form-data; name=\"meta\"\r\n"
            b"Content-Type: application/json\r\n\r\n{\"email\":\"a@b.com\"}\r\n--XyZ\r\n"
            b"Content-Disposition: form-data; name=\"file\"; filename=\"john smith cv.pdf\"\r\n"
            b"Content-Type: application/pdf\r\n\r\n%PDF-1.4\x00\x01\x02\xff\r\n--XyZ--\r\nepilogue")
    p = parse_body(body, "multipart/form-data; boundary=XyZ", None, LIM)
    assert p.format == "multipart" and p.flags == ["file_upload"]
    assert fields(p) == {"form:comment": "Hello from John", "form:meta>$.email": "a@b.com",
                         "form:file>filename": "john smith cv.pdf"}
    assert [(f.name, f.content_type, f.size, f.filename) for f in p.files] == [("file", "application/pdf", 12, True)]
    out = write_back(p, {"form:comment": "Hello from [PERSON_1]", "form:meta>$.email": "[E]",
                         "form:file>filename": "[F].pdf"})
    assert out.startswith(b"preamble\r\n--XyZ\r\n") and out.endswith(b"--XyZ--\r\nepilogue")
    assert b"Content-Length: 21\r\n\r\nHello from [PERSON_1]\r\n" in out
    assert b'filename="[F].pdf"' in out and b"%PDF-1.4\x00\x01\x02\xff" in out
    again = parse_body(out, "multipart/form-data; boundary=XyZ", None, LIM)
    assert fields(again) == {"form:comment": "Hello from [PERSON_1]", "form:meta>$.email": "[E]",
                             "form:file>filename": "[F].pdf"}
    with pytest.raises(BodyError):
        write_back(p, {"form:comment": "x\r\n--XyZ\r\ninjected"})


def test_multipart_without_boundary_or_end():
    assert parse_body(b"--a\r\n\r\nx", "multipart/form-data", None, LIM).flags == ["unparsed", "no_boundary"]
    p = parse_body(b"--b\r\nContent-Disposition: form-data; name=\"t\"\r\n\r\ncut off here",
                   "multipart/form-data; boundary=b", None, LIM)
    assert "truncated" in p.flags and fields(p) == {"form:t": "cut off here"}


def test_graphql_literals_query_and_variables():
    doc = {"query": 'mutation Login($p: String!) { login(email: "bob@x.com", note: """multi\nline""") { t } }',
           "variables": {"p": "hunter2"}, "operationName": "Login"}
    p = parse_body(json.dumps(doc).encode(), "application/json", None, LIM)
    assert p.format == "graphql"
    assert fields(p) == {"json:$.query>gql:0": "bob@x.com", "json:$.query>gql:1": "multi\nline",
                         "json:$.variables.p": "hunter2", "json:$.operationName": "Login"}
    assert {f.path: f.key for f in p.fields}["json:$.query>gql:0"] == "email"
    out = json.loads(write_back(p, {"json:$.query>gql:0": 'a "quoted" \\ value', "json:$.variables.p": "***"}))
    assert 'login(email: "a \\"quoted\\" \\\\ value", note: """multi\nline""")' in out["query"]
    again = parse_body(json.dumps(out).encode(), "application/json", None, LIM)
    assert fields(again)["json:$.query>gql:0"] == 'a "quoted" \\ value'
    raw = parse_body(b'query { user(id: "42") { name } }', "application/graphql", None, LIM)
    assert fields(raw) == {"text:>gql:0": "42"}
    assert write_back(raw, {"text:>gql:0": "0"}) == b'query { user(id: "0") { name } }'


def test_ndjson_and_json_seq():
    body = b'{"event":"a"}\n\n{"event":"b","email":"c@d.com"}\n'
    p = parse_body(body, "application/x-ndjson", None, LIM)
    assert p.format == "ndjson" and "batched" in p.flags
    assert fields(p) == {"json:$[0].event": "a", "json:$[2].event": "b", "json:$[2].email": "c@d.com"}
    assert write_back(p, {"json:$[2].email": "[E]"}) == b'{"event":"a"}\n\n{"event":"b","email":"[E]"}\n'
    seq = parse_body(b'\x1e{"a":"x"}\n\x1e{"a":"y"}\n', "application/json-seq", None, LIM)
    assert seq.format == "ndjson" and fields(seq) == {"json:$[1].a": "x", "json:$[2].a": "y"}


def test_batched_beacon_lines_in_text_plain():
    body = b"en=page_view&dl=https%3A%2F%2Fx.com%2F%3Fe%3Da%40b.com\nen=scroll&epn.pct=90\n"
    p = parse_body(body, "text/plain;charset=UTF-8", None, LIM)
    assert p.format == "form" and p.flags == ["sniffed", "batched"]
    assert fields(p)["form:dl@0"] == "https://x.com/?e=a@b.com" and fields(p)["form:en@1"] == "scroll"
    assert write_back(p, {"form:dl@0": "X"}) == b"en=page_view&dl=X\nen=scroll&epn.pct=90\n"


def test_json_in_a_string_and_outer_replacement():
    body = json.dumps({"fn": {"arguments": json.dumps({"to": "o@x.com", "n": 2})}}).encode()
    p = parse_body(body, "application/json", None, LIM)
    assert fields(p) == {"json:$.fn.arguments>$.to": "o@x.com", "json:$.fn.arguments>$.n": "2"}
    inner = json.loads(json.loads(write_back(p, {"json:$.fn.arguments>$.to": "[E]"}))["fn"]["arguments"])
    assert inner == {"to": "[E]", "n": 2}
    whole = json.loads(write_back(p, {"json:$.fn.arguments": '{"to": "[E]"}'}))  # a chat stage rewriting the string
    assert whole == {"fn": {"arguments": '{"to": "[E]"}'}}


def test_base64_json_in_a_form_value():
    payload = json.dumps({"event": "x", "properties": {"$email": "a@b.com"}}).encode()
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        raw = enc(payload).decode().rstrip("=")
        p = parse_body(f"data={raw}&ip=1".encode(), "application/x-www-form-urlencoded", None, LIM)
        assert fields(p)["form:data>b64:$.properties['$email']"] == "a@b.com"
        out = write_back(p, {"form:data>b64:$.properties['$email']": "[E]"})
        again = parse_body(out, "application/x-www-form-urlencoded", None, LIM)
        assert fields(again)["form:data>b64:$.properties['$email']"] == "[E]"


def test_base64_plain_text_and_url_encoded_json_inside_values():
    """The same e-mail base64-encoded as plain text, or JSON URL-encoded once more, is read and written back in
    the encoding that carried it; random base64 tokens and hex digests are not mistaken for text."""
    text = "1=jane.doorwright@examplemail.com&2=+15550142"
    raw = base64.b64encode(text.encode()).decode()
    p = parse_body(json.dumps({"pd": raw, "id": "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3"}).encode(), "application/json",
                   None, LIM)
    assert fields(p)["json:$.pd>b64t:"] == text and fields(p)["json:$.id"] == "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3"
    out = json.loads(write_back(p, {"json:$.pd>b64t:": "1=[EMAIL]&2=[PHONE]"}))
    assert base64.b64decode(out["pd"]).decode() == "1=[EMAIL]&2=[PHONE]"
    token = base64.b64encode(hashlib.sha256(b"x").digest() * 2).decode()  # random bytes: one opaque value
    digest = "ef561d840948dd7d1311472361295cc32ff2fa2e9387f9936c3190584ca55b1e"
    p = parse_body(json.dumps({"t": token, "h": digest}).encode(), "application/json", None, LIM)
    assert set(fields(p)) == {"json:$.t", "json:$.h"}
    twice = "%7B%22email%22%3A%22jane%40examplemail.com%22%7D"
    p = parse_body(f"ctx={twice.replace('%', '%25')}&v=2".encode(), "application/x-www-form-urlencoded", None, LIM)
    assert fields(p)["form:ctx>url:$.email"] == "jane@examplemail.com"
    out = write_back(p, {"form:ctx>url:$.email": "[E]"})
    assert fields(parse_body(out, "application/x-www-form-urlencoded", None, LIM))["form:ctx>url:$.email"] == "[E]"


def test_duplicate_keys_are_all_seen_and_written():
    p = parse_body(b'{"e":"a@x.com","e":"b@x.com","n":{"x":1,"x":2}}', "application/json", None, LIM)
    assert p.flags == ["duplicate_keys"]
    assert fields(p) == {"json:$.e": "a@x.com", "json:$.e#1": "b@x.com", "json:$.n.x": "1", "json:$.n.x#1": "2"}
    assert write_back(p, {"json:$.e#1": "[E]", "json:$.n.x": "5"}) == b'{"e":"a@x.com","e":"[E]","n":{"x":5,"x":2}}'


def test_truncated_json_is_scanned_and_spliced():
    p = parse_body(b'{"email": "a@b.com", "note": "call Jo', "application/json", None, LIM)
    assert p.format == "unparsed" and set(p.flags) == {"unparsed", "invalid_json", "truncated"}
    assert [(f.path, f.text, f.key) for f in p.fields] == [("json:@0", "a@b.com", "email"), ("json:@1", "call Jo", "note")]
    assert write_back(p, {"json:@0": 'x"y'}) == b'{"email": "x\\"y", "note": "call Jo'


def test_long_field_is_truncated_and_its_tail_kept_on_write_back():
    lim = BodyLimits(max_field_chars=10)
    p = parse_body(json.dumps({"t": "John Smith and a long tail"}).encode(), "application/json", None, lim)
    assert p.flags == ["truncated"] and fields(p) == {"json:$.t": "John Smith"}
    assert json.loads(write_back(p, {"json:$.t": "[PERSON_1]"})) == {"t": "[PERSON_1] and a long tail"}


def test_invalid_utf8_kept_byte_for_byte():
    body = b'{"a":"caf\xe9 ok","b":"john@x.com"}'
    p = parse_body(body, "application/json", None, LIM)
    assert p.format == "json" and p.flags == ["invalid_utf8"]
    assert fields(p)["json:$.a"] == "caf\ufffd ok"
    assert write_back(p, {"json:$.b": "[E]"}) == b'{"a":"caf\xe9 ok","b":"[E]"}'


def test_content_type_mismatch_and_sniffing():
    assert parse_body(b"a=1&b=x", "application/json", None, LIM).flags == ["content_type_mismatch"]
    p = parse_body(b'{"a":"x"}', "application/x-www-form-urlencoded", None, LIM)
    assert p.format == "json" and p.flags == ["content_type_mismatch"]
    p = parse_body(b'{"n":"pageview"}', "text/plain", None, LIM)
    assert p.format == "json" and p.flags == ["sniffed"]
    assert parse_body(b"just words = here", "text/plain", None, LIM).format == "text"


def test_depth_limit_keeps_shallow_fields_and_deep_bytes():
    doc = {"email": "a@b.com", "deep": [[[[["x"]]]]]}
    p = parse_body(json.dumps(doc).encode(), "application/json", None, BodyLimits(max_json_depth=3))
    assert "depth_limit" in p.flags and "unparsed" in p.flags and fields(p) == {"json:$.email": "a@b.com"}
    assert json.loads(write_back(p, {"json:$.email": "[E]"})) == {"email": "[E]", "deep": [[[[["x"]]]]]}


def test_bad_input_flags_never_raise():
    assert set(parse_body(b"{not json", "application/json", None, LIM).flags) == {"unparsed", "invalid_json"}
    assert parse_body(b"\xff\xfe\x00bad", "text/plain", None, LIM).format == "unparsed"
    assert parse_body(b"\x89PNG\r\n\x1a\n\x00\xff", "image/png", None, LIM).format == "binary"
    assert parse_body(b"\x00\x01\x02", None, None, LIM).format == "binary"
    assert parse_body(b"abc", "text/plain", "snappy", LIM).flags == ["unparsed", "bad_encoding"]
    assert parse_body(b"x" * 100, "text/plain", None, BodyLimits(max_body_bytes=10)).format == "too_large"
    bomb = gzip.compress(b"\0" * 5_000_000)
    assert parse_body(bomb, "application/json", "gzip", BodyLimits(max_decoded_bytes=1_000_000)).flags == [
        "too_large", "decompression_limit"]
    deep = b"[" * 200 + b"\"v\"" + b"]" * 200
    p = parse_body(deep, "application/json", None, BodyLimits(max_json_depth=10))
    assert "depth_limit" in p.flags and p.fields == []
    very_deep = b"[" * 100_000 + b"]" * 100_000
    assert set(parse_body(very_deep, "application/json", None, LIM).flags) >= {"unparsed", "depth_limit"}
    with pytest.raises(BodyError):
        write_back(parse_body(b"\x89PNG", "image/png", None, LIM), {"text:": "x"})


def test_is_body_path():
    assert bodies.is_body_path("json:$.a") and bodies.is_body_path("form:x>$.y") and bodies.is_body_path("text:")
    assert not bodies.is_body_path("query:q") and not bodies.is_body_path("cookie:sid") and not bodies.is_body_path("path:")
