import json

from guardian_proxy import bodies
from guardian_proxy.bodies import BodyLimits, parse_body, write_back

LIM = BodyLimits()


def test_json_paths_and_write_back():
    body = json.dumps({"user": {"email": "a@b.com", "first name": "Ann", "age": 41}, "items": [{"n": "x"}],
                       "ok": True}).encode()
    p = parse_body(body, "application/json", None, LIM)
    paths = {f.path: f.text for f in p.fields}
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


def test_form_write_back_keeps_duplicates():
    p = parse_body(b"q=john+smith&tag=a&tag=b", "application/x-www-form-urlencoded", None, LIM)
    assert [f.path for f in p.fields] == ["form:q", "form:tag", "form:tag#1"]
    assert write_back(p, {"form:q": "[PERSON_1]", "form:tag#1": "c"}) == b"q=%5BPERSON_1%5D&tag=a&tag=c"


def test_query_and_cookies():
    assert [(f.path, f.text) for f in bodies.parse_query("https://x.com/c?uid=42&e=a%40b.com")] == [
        ("query:uid", "42"), ("query:e", "a@b.com")]
    assert bodies.rewrite_url("https://x.com/c?uid=42&e=z", {"query:uid": "0"}) == "https://x.com/c?uid=0&e=z"
    cookies = bodies.parse_cookies("sid=abc; _ga=GA1.2.3")
    assert [f.path for f in cookies] == ["cookie:sid", "cookie:_ga"]
    assert bodies.rewrite_cookies("sid=abc; _ga=GA1.2.3", {"cookie:_ga": "x"}) == "sid=abc; _ga=x"


def test_bad_input_flags_never_raise():
    assert parse_body(b"{not json", "application/json", None, LIM).flags == ["unparsed", "invalid_json"]
    assert parse_body(b"\xff\xfe\x00bad", "text/plain", None, LIM).format == "unparsed"
    assert parse_body(b"\x89PNG\r\n\x1a\n\x00\xff", "image/png", None, LIM).format == "binary"
    assert parse_body(b"abc", "text/plain", "snappy", LIM).flags == ["unparsed", "bad_encoding"]
    assert parse_body(b"x" * 100, "text/plain", None, BodyLimits(max_body_bytes=10)).format == "too_large"
    deep = b"[" * 200 + b"\"v\"" + b"]" * 200
    p = parse_body(deep, "application/json", None, BodyLimits(max_json_depth=10))
    assert "depth_limit" in p.flags and p.fields == []
