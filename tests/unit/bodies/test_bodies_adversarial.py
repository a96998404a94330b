"""docs/security.md: bodies and query strings built so the extractor would not see the value in them.

Each case is read at the level of bodies (the field holding the value is found, and a write-back puts a
replacement back in the same encoding, every other byte as sent) and through the real extractor (the span is
found)."""

import base64
import gzip
import hashlib
import json
import zlib
from urllib.parse import quote

import brotli
import pytest

from guardian_proxy import bodies, codec
from guardian_proxy.bodies import BodyLimits, parse_body, write_back
from guardian_proxy.errors import BodyError
from guardian_proxy.extract import Extractor
from guardian_proxy.extract.detector import Detector
from guardian_proxy.types import RawRequest

LIM = BodyLimits()
EMAIL, CARD, SSN = "jane.doe@example.com", "4111111111111111", "078-05-1120"
DOC = json.dumps({"email": EMAIL})


@pytest.fixture(scope="module")
def ex():
    return Extractor(Detector(ner=False))


def fields(p):
    return {f.path: f.text for f in p.fields}


def found(ex, url="https://t.example.org/c", body=b"", ctype=None, **headers) -> dict[str, str]:
    """entity → path of the first span of that entity the extractor finds."""
    h = [("content-type", ctype)] if ctype else []
    h += [(k.replace("_", "-"), v) for k, v in headers.items()]
    a = ex.extract(RawRequest(method="POST" if body else "GET", url=url, headers=h, body=body))
    out: dict[str, str] = {}
    for s in a.spans:
        out.setdefault(s.entity, s.path)
    return out


# --------------------------------------------------------------------------- 1. query values without a key


def test_query_values_without_a_key_are_fields_and_rewritten_in_place(ex):
    url = f"https://t.example.org/pixel?{EMAIL}&{CARD}"
    assert [(f.path, f.text) for f in bodies.parse_query(url)] == [("query:#0", EMAIL), ("query:#1", CARD)]
    assert bodies.rewrite_url(url, {"query:#1": "[CARD]"}) == f"https://t.example.org/pixel?{EMAIL}&%5BCARD%5D"
    url2 = "https://t.example.org/p?a=1&jane.doe%40example.com#frag"
    assert fields_of(url2) == {"query:a": "1", "query:#1": EMAIL}
    assert bodies.rewrite_url(url2, {"query:#1": "x@y.z"}) == "https://t.example.org/p?a=1&x%40y.z#frag"
    got = found(ex, url)
    assert got["EMAIL_ADDRESS"] == "query:#0" and got["CREDIT_CARD"] == "query:#1"
    assert found(ex, url2)["EMAIL_ADDRESS"] == "query:#1"


def fields_of(url):
    return {f.path: f.text for f in bodies.parse_query(url)}


def test_form_part_without_a_key_is_a_field():
    p = parse_body(f"a=1&{quote(EMAIL)}".encode(), "application/x-www-form-urlencoded", None, LIM)
    assert fields(p) == {"form:a": "1", "form:#1": EMAIL}
    assert write_back(p, {"form:#1": "[E]"}) == b"a=1&%5BE%5D"


# --------------------------------------------------------------------------- 2. JSON as the whole query string


@pytest.mark.parametrize("q", [quote(DOC, safe=""), quote(DOC, safe=":,"), DOC])
def test_json_as_the_whole_query_string(ex, q):
    url = "https://t.example.org/collect?" + q
    assert fields_of(url) == {"query:#0>$.email": EMAIL}
    new = bodies.rewrite_url(url, {"query:#0>$.email": "[EMAIL]"})
    assert new.startswith("https://t.example.org/collect?%7B") and fields_of(new) == {"query:#0>$.email": "[EMAIL]"}
    assert found(ex, url)["EMAIL_ADDRESS"] == "query:#0>$.email"


@pytest.mark.parametrize("enc", [base64.b64encode, base64.urlsafe_b64encode])
def test_base64_json_as_the_whole_query_string(ex, enc):
    doc = json.dumps({"email": EMAIL, "n": "é~~~?>"}).encode()  # '+', '/' and '=' in the base64
    b64 = enc(doc).decode()
    url = "https://t.example.org/i?" + b64
    assert fields_of(url)["query:#0>b64:$.email"] == EMAIL
    new = bodies.rewrite_url(url, {"query:#0>b64:$.email": "[EMAIL]"})
    raw = new.split("?", 1)[1]
    assert json.loads(base64.b64decode(raw.replace("-", "+").replace("_", "/")))["email"] == "[EMAIL]"
    assert found(ex, url)["EMAIL_ADDRESS"] == "query:#0>b64:$.email"


# --------------------------------------------------------------------------- 3. base64 of plain text


TEXT = f"name: Jane Doe\nemail {EMAIL}\ncard {CARD}\nssn {SSN}\n" * 2


def test_line_wrapped_base64_text_in_a_json_field(ex):
    wrapped = base64.encodebytes(TEXT.encode()).decode()  # MIME: 76 columns, '\n' after each line
    assert "\n" in wrapped.rstrip("\n")
    body = json.dumps({"d": wrapped, "id": "x"}).encode()
    p = parse_body(body, "application/json", None, LIM)
    assert fields(p)["json:$.d>b64t:"] == TEXT
    out = json.loads(write_back(p, {"json:$.d>b64t:": TEXT.replace(EMAIL, "[EMAIL]")}))
    assert out["d"] == base64.encodebytes(TEXT.replace(EMAIL, "[EMAIL]").encode()).decode()
    got = found(ex, body=body, ctype="application/json")
    assert got["EMAIL_ADDRESS"] == got["CREDIT_CARD"] == got["US_SSN"] == "json:$.d>b64t:"


def test_base64_text_whose_plus_signs_a_form_turned_into_spaces(ex):
    text = f"e={EMAIL}>>>?c={CARD}"
    raw = base64.b64encode(text.encode()).decode()
    assert "+" in raw
    body = ("d=" + raw + "&v=1").encode()  # '+' sent unescaped: a form decoder reads it as a space
    p = parse_body(body, "application/x-www-form-urlencoded", None, LIM)
    assert fields(p)["form:d>b64t:"] == text
    out = write_back(p, {"form:d>b64t:": "e=[E]"})
    assert out == b"d=" + quote(base64.b64encode(b"e=[E]").decode(), safe="").encode() + b"&v=1"
    assert found(ex, body=body, ctype="application/x-www-form-urlencoded")["EMAIL_ADDRESS"] == "form:d>b64t:"


def test_a_text_body_that_is_base64(ex):
    body = base64.b64encode(TEXT.encode())
    p = parse_body(body, "text/plain", None, LIM)
    assert fields(p) == {"text:>b64t:": TEXT}
    assert write_back(p, {"text:>b64t:": "x y z w v u t s"}) == base64.b64encode(b"x y z w v u t s")
    jbody = base64.b64encode(DOC.encode())
    assert fields(parse_body(jbody, "text/plain", None, LIM)) == {"text:>b64:$.email": EMAIL}
    assert found(ex, body=body, ctype="text/plain")["CREDIT_CARD"] == "text:>b64t:"


def test_base64_tokens_and_hashes_are_not_read_as_text():
    tokens = {
        "sha": base64.b64encode(hashlib.sha256(b"x").digest()).decode(),
        "sha_spaced": base64.b64encode(hashlib.sha512(b"y").digest()).decode().replace("+", " "),
        "wrapped": base64.encodebytes(hashlib.sha512(b"z").digest() * 3).decode(),
        "id": "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3",
        "words": "the quick brown fox jumps over the lazy dog",
    }
    p = parse_body(json.dumps(tokens).encode(), "application/json", None, LIM)
    assert all(">" not in path for path in fields(p)), fields(p)
    assert fields(p)["json:$.words"] == tokens["words"]


def test_base64_in_base64_stops_at_the_embed_depth():
    s = TEXT
    for _ in range(12):
        s = base64.b64encode(s.encode()).decode()
    p = parse_body(json.dumps({"d": s}).encode(), "application/json", None, LIM)
    assert len(p.fields) == 1 and p.fields[0].path.count(">") <= 4


# --------------------------------------------------------------------------- 4. JSON URL-encoded twice


def test_json_url_encoded_twice_in_a_json_field_and_in_a_form(ex):
    twice = quote(quote(DOC, safe=""), safe="")
    assert twice.startswith("%257B")
    body = json.dumps({"ctx": twice}).encode()
    p = parse_body(body, "application/json", None, LIM)
    assert fields(p) == {"json:$.ctx>url:$.email": EMAIL}
    out = json.loads(write_back(p, {"json:$.ctx>url:$.email": "[E]"}))
    assert out["ctx"] == quote(quote('{"email":"[E]"}', safe=""), safe="")
    assert found(ex, body=body, ctype="application/json")["EMAIL_ADDRESS"] == "json:$.ctx>url:$.email"
    form = b"a=1&data=" + quote(twice, safe="").encode()  # the form's own encoding on top: three layers
    pf = parse_body(form, "application/x-www-form-urlencoded", None, LIM)
    assert fields(pf)["form:data>url:$.email"] == EMAIL
    assert found(ex, body=form, ctype="application/x-www-form-urlencoded")["EMAIL_ADDRESS"] == \
        "form:data>url:$.email"
    url = "https://t.example.org/c?data=" + quote(twice, safe="")
    assert fields_of(url)["query:data>url:$.email"] == EMAIL


def test_url_encoding_layers_are_bounded():
    s = DOC
    for _ in range(10):
        s = quote(s, safe="")
    p = parse_body(json.dumps({"ctx": s}).encode(), "application/json", None, LIM)
    assert list(fields(p)) == ["json:$.ctx"]  # read as it is, no loop


# --------------------------------------------------------------------------- 5. brotli without Content-Encoding


def test_brotli_body_without_content_encoding(ex):
    raw = json.dumps({"email": EMAIL, "n": 1}).encode()
    body = brotli.compress(raw)
    assert codec.sniff(body) is None
    p = parse_body(body, "application/json", None, LIM)
    assert p.format == "json" and "sniffed" in p.flags and p.encoding == "br"
    assert fields(p)["json:$.email"] == EMAIL
    out = codec.encode(write_back(p, {"json:$.email": "[E]"}), p.encoding)
    assert json.loads(brotli.decompress(out)) == {"email": "[E]", "n": 1}
    assert found(ex, body=body, ctype="text/plain")["EMAIL_ADDRESS"] == "json:$.email"


def test_brotli_sniff_keeps_the_limit_and_binary_stays_binary():
    bomb = brotli.compress(json.dumps({"email": EMAIL, "pad": "x" * 3_000_000}).encode())
    p = parse_body(bomb, "application/json", None, BodyLimits(max_decoded_bytes=1_000_000))
    assert p.format == "too_large" and "decompression_limit" in p.flags and fields(p)["json:@0"] == EMAIL
    with pytest.raises(BodyError):
        write_back(p, {"json:@0": "x"})
    p = parse_body(brotli.compress(bytes(range(256)) * 8), None, None, LIM)
    assert p.format in ("binary", "unparsed") and not p.fields
    assert parse_body(hashlib.sha512(b"r").digest() * 4, "application/octet-stream", None, LIM).format == "binary"


# --------------------------------------------------------------------------- 6. protobuf and gRPC


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(num, payload: bytes | str):
    payload = payload.encode() if isinstance(payload, str) else payload
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def message(email=EMAIL, card=CARD):
    inner = ld(1, card) + varint(2 << 3 | 5) + b"\x01\x02\x03\x04"
    return (ld(1, email) + varint(2 << 3) + varint(300) + ld(3, inner) + ld(4, b"\x00\xff\xfe\x01")
            + varint(5 << 3 | 1) + b"\x00" * 8 + ld(6, json.dumps({"ssn": SSN})))


def frame(msg: bytes, flag=0):
    return bytes([flag]) + len(msg).to_bytes(4, "big") + msg


@pytest.mark.parametrize("ctype", ["application/x-protobuf", "application/protobuf"])
def test_protobuf_text_fields_nested_and_write_back(ex, ctype):
    body = message()
    p = parse_body(body, ctype, None, LIM)
    assert p.format == "protobuf"
    assert fields(p) == {"proto:1": EMAIL, "proto:3.1": CARD, "proto:6>$.ssn": SSN}
    out = write_back(p, {"proto:1": "[EMAIL]", "proto:3.1": "[CARD 1]"})
    assert out == message("[EMAIL]", "[CARD 1]")  # lengths re-encoded, every other byte as sent
    long = "x" * 200 + EMAIL  # a length that needs a 2-byte varint
    assert write_back(p, {"proto:1": long}) == message(long)
    got = found(ex, body=body, ctype=ctype)
    assert got == {"EMAIL_ADDRESS": "proto:1", "CREDIT_CARD": "proto:3.1", "US_SSN": "proto:6>$.ssn"}


@pytest.mark.parametrize("ctype", ["application/grpc", "application/grpc-web+proto", "application/grpc-web"])
def test_grpc_frames(ex, ctype):
    body = frame(message()) + frame(ld(1, "second@example.com"))
    p = parse_body(body, ctype, None, LIM)
    assert fields(p) == {"proto:1": EMAIL, "proto:3.1": CARD, "proto:6>$.ssn": SSN, "proto:1@1": "second@example.com"}
    out = write_back(p, {"proto:1": "[E]", "proto:1@1": "[E2]"})
    assert out == frame(message("[E]")) + frame(ld(1, "[E2]"))
    assert found(ex, body=body, ctype=ctype)["EMAIL_ADDRESS"] == "proto:1"


def test_grpc_web_text_and_compressed_frames(ex):
    body = base64.b64encode(frame(message()))
    p = parse_body(body, "application/grpc-web-text", None, LIM)
    assert fields(p)["proto:3.1"] == CARD
    assert base64.b64decode(write_back(p, {"proto:3.1": "[C]"})) == frame(message(card="[C]"))
    assert found(ex, body=body, ctype="application/grpc-web-text+proto")["CREDIT_CARD"] == "proto:3.1"
    gz = frame(gzip.compress(message()), flag=1)
    pg = parse_body(gz, "application/grpc", None, LIM)
    assert fields(pg)["proto:1"] == EMAIL
    out = write_back(pg, {"proto:1": "[E]"})
    assert out[0] == 1 and int.from_bytes(out[1:5], "big") == len(out) - 5
    assert gzip.decompress(out[5:]) == message("[E]")


def test_protobuf_cut_off_group_and_bounds():
    body = frame(message())[:-10]  # the frame says more bytes than there are
    p = parse_body(body, "application/grpc", None, LIM)
    assert fields(p)["proto:1"] == EMAIL and "truncated" in p.flags
    with pytest.raises(BodyError):
        write_back(p, {"proto:1": "[E]"})
    grouped = ld(1, EMAIL) + varint(2 << 3 | 3) + b"\x08\x01" + varint(2 << 3 | 4) + ld(3, "after")
    pg = parse_body(grouped, "application/x-protobuf", None, LIM)
    assert fields(pg) == {"proto:1": EMAIL} and "unparsed" in pg.flags
    assert write_back(pg, {"proto:1": "[E]"}) == ld(1, "[E]") + grouped[len(ld(1, EMAIL)):]
    deep = ld(1, EMAIL)
    for _ in range(200):  # nesting past the bound: no recursion error, the body is still read
        deep = ld(1, deep)
    assert parse_body(deep, "application/x-protobuf", None, LIM).format == "protobuf"
    many = ld(1, "a b") * 50_000
    assert len(parse_body(many, "application/x-protobuf", None, LIM).fields) <= 20_000


def test_protobuf_that_is_not_protobuf():
    assert parse_body(DOC.encode(), "application/x-protobuf", None, LIM).fields[0].path == "json:$.email"
    assert parse_body(b"\x07\x07\x07", "application/x-protobuf", None, LIM).format == "binary"


# --------------------------------------------------------------------------- 7. UTF-16 without a charset


@pytest.mark.parametrize("enc,bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-16-le", b""),
                                     ("utf-16-be", b"")])
def test_utf16_json_without_a_charset(ex, enc, bom):
    doc = json.dumps({"email": EMAIL, "city": "Köln"}, ensure_ascii=False)
    body = bom + doc.encode(enc)
    p = parse_body(body, "application/json", None, LIM)
    assert fields(p)["json:$.email"] == EMAIL and fields(p)["json:$.city"] == "Köln"
    out = write_back(p, {"json:$.email": "[E]"})
    assert out.startswith(bom) and json.loads(out[len(bom):].decode(enc)) == {"email": "[E]", "city": "Köln"}
    assert found(ex, body=body, ctype="application/json")["EMAIL_ADDRESS"] == "json:$.email"


def test_bytes_that_start_like_a_bom_are_not_utf16():
    assert parse_body(b"\xff\xfe\xfa\x00\x01garbage", "text/plain", None, LIM).format == "unparsed"


# --------------------------------------------------------------------------- 8. a false Content-Type


@pytest.mark.parametrize("ctype", ["image/png", "image/gif", "application/octet-stream", "font/woff2", "video/mp4"])
def test_a_false_content_type_is_read_as_what_the_body_is(ex, ctype):
    form = f"email={quote(EMAIL)}&card={CARD}".encode()
    p = parse_body(form, ctype, None, LIM)
    assert p.format == "form" and "content_type_mismatch" in p.flags and EMAIL in fields(p).values()
    text = f"hello, mail me at {EMAIL}".encode()
    pt = parse_body(text, ctype, None, LIM)
    assert pt.format == "text" and "content_type_mismatch" in pt.flags
    assert write_back(pt, {"text:": "hello"}) == b"hello"
    pj = parse_body(DOC.encode(), ctype, None, LIM)
    assert pj.format == "json" and fields(pj) == {"json:$.email": EMAIL}
    assert found(ex, body=form, ctype=ctype)["CREDIT_CARD"].startswith("form:card")
    assert found(ex, body=text, ctype=ctype)["EMAIL_ADDRESS"] == "text:"


@pytest.mark.parametrize("body,ctype", [
    (b"\x89PNG\r\n\x1a\n" + f"email {EMAIL}".encode(), "image/png"),
    (b"GIF89a" + f"email {EMAIL}".encode(), "image/gif"),
    (b"\xff\xd8\xff\xe0" + b"\x00\x10JFIF", "image/jpeg"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "application/pdf"),
    (b"wOF2\x00\x01\x00\x00", "font/woff2"),
])
def test_real_media_stays_binary(body, ctype):
    p = parse_body(body, ctype, None, LIM)
    assert p.format == "binary" and not p.fields


# --------------------------------------------------------------------------- 9. padding past max_body_bytes


SMALL = BodyLimits(max_body_bytes=10_000, max_decoded_bytes=20_000)


def test_padding_past_the_body_limit_does_not_hide_the_first_part(ex):
    body = json.dumps({"email": EMAIL, "pad": "x" * 50_000, "card": CARD}).encode()
    p = parse_body(body, "application/json", None, SMALL)
    assert p.format == "too_large" and "too_large" in p.flags
    assert EMAIL in fields(p).values() and CARD not in "".join(fields(p).values())
    path = next(k for k, v in fields(p).items() if v == EMAIL)
    assert write_back(p, {path: "[EMAIL]"}) == body.replace(EMAIL.encode(), b"[EMAIL]")  # the rest as sent
    a = Extractor(Detector(ner=False), SMALL).extract(
        RawRequest(method="POST", url="https://t.example.org/c", headers=[("content-type", "application/json")],
                   body=body))
    assert "too_large" in a.flags and [s.entity for s in a.spans] == ["EMAIL_ADDRESS"]
    text = (f"card {CARD} " + "y" * 20_000).encode()
    pt = parse_body(text, "text/plain", None, SMALL)
    assert pt.format == "too_large" and fields(pt)["text:"].startswith(f"card {CARD}")
    assert write_back(pt, {"text:": "card [C]"}) == b"card [C]" + text[SMALL.max_body_bytes:]


def test_over_limit_form_and_multibyte_cut():
    body = ("e=" + quote(EMAIL) + "&n=" + "é" * 10_000).encode()
    p = parse_body(body, "application/x-www-form-urlencoded", None, SMALL)
    assert p.format == "too_large" and fields(p)["form:e"] == EMAIL and "invalid_utf8" not in p.flags
    assert write_back(p, {"form:e": "x"}) == body.replace(quote(EMAIL).encode(), b"x")


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", "deflate"])
def test_compressed_over_limit_bodies_decode_up_to_the_limit(coding):
    raw = json.dumps({"email": EMAIL, "pad": " " * 100_000}).encode()
    body = codec.encode(raw, coding)
    p = parse_body(body, "application/json", coding, SMALL)
    assert p.format == "too_large" and "decompression_limit" in p.flags and fields(p)["json:@0"] == EMAIL
    with pytest.raises(BodyError):  # a compressed body cut at the limit cannot be rebuilt: the pipeline blocks
        write_back(p, {"json:@0": "[E]"})
    sniffed = parse_body(gzip.compress(raw), "application/json", None, SMALL)  # no header: magic bytes
    assert sniffed.format == "too_large" and fields(sniffed)["json:@0"] == EMAIL


def test_compressed_body_over_the_wire_limit_is_read_from_its_start():
    rnd = b"".join(hashlib.sha256(str(i).encode()).hexdigest().encode() for i in range(2000))  # incompressible
    raw = json.dumps({"email": EMAIL, "pad": rnd.decode()}).encode()
    body = zlib.compress(raw)
    assert len(body) > SMALL.max_body_bytes
    p = parse_body(body, "application/json", "deflate", SMALL)
    assert p.format == "too_large" and fields(p)["json:@0"] == EMAIL
