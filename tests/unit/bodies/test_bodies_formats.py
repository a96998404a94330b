"""Rewrites keep the format (docs/design/anonymization.md): a JSON number stays a JSON number, a sniffed
compression goes back as it came, byte for byte when nothing changed."""

import gzip
import json
import zlib

import brotli
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from guardian_proxy import codec, standins
from guardian_proxy.bodies import BodyLimits, parse_body, write_back

LIMIT = 8 * 1024 * 1024


def _rewrite(body: dict, repl: dict[str, str]) -> dict:
    raw = json.dumps(body).encode()
    parsed = parse_body(raw, "application/json", None, BodyLimits())
    return json.loads(write_back(parsed, repl))


@pytest.mark.parametrize("new", ["[AMOUNT_1]", "52.[CREDIT_CARD_1]", "•••••.23", "0123", "[…]", "12,5"])
def test_a_json_number_stays_a_json_number_whatever_replaces_it(new):
    out = _rewrite({"t": 52.123, "n": 4711, "s": "x"}, {"json:$.t": new, "json:$.n": new})
    assert isinstance(out["t"], float) and isinstance(out["n"], int) and out["s"] == "x"
    assert len(str(out["n"])) == 4 and out["t"] != 52.123


def test_a_numeric_replacement_is_kept_and_a_leading_zero_never_makes_invalid_json():
    assert _rewrite({"n": 4711}, {"json:$.n": "4712"}) == {"n": 4712}
    assert _rewrite({"n": -4711}, {"json:$.n": "-0042"})["n"] < 0


def test_a_phone_or_card_sent_as_a_json_number_becomes_a_fiction_or_test_number():
    out = _rewrite({"ph": 15128675309, "pan": 4556737586899855},
                   {"json:$.ph": "[PHONE_NUMBER_1]", "json:$.pan": "[CREDIT_CARD_2]"})
    assert str(out["ph"]).startswith("1") and str(out["ph"])[-7:-2] == "55501"
    assert standins.luhn_ok(str(out["pan"])) and str(out["pan"]).startswith(("411111", "424242"))


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.integers(-10**15, 10**15), st.floats(allow_nan=False, allow_infinity=False, width=32)),
       st.sampled_from(["[X_1]", "a", "1.2.3", ""]))
def test_any_json_number_written_back_is_a_json_number(value, new):
    out = _rewrite({"v": value}, {"json:$.v": new})
    assert isinstance(out["v"], int | float) and not isinstance(out["v"], bool)
    assert isinstance(out["v"], int) == isinstance(value, int)


# --------------------------------------------------------------------------- compression as sent


_CODERS = {"gzip": gzip.compress, "deflate": zlib.compress, "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
           "br": brotli.compress}


@pytest.mark.parametrize("coding", sorted(_CODERS))
def test_a_sniffed_body_goes_back_in_its_compression(coding):
    plain = json.dumps({"email": "homary@yahoo.com", "events": list(range(40))}).encode()
    sent = _CODERS[coding](plain)
    parsed = parse_body(sent, "text/plain", None, BodyLimits())
    assert parsed.format == "json" and parsed.encoding == coding
    new = write_back(parsed, {"json:$.email": "ab12@example.com"})
    out = codec.as_sent(sent, None, new, LIMIT)
    assert codec.decode(out, coding, LIMIT) == new and json.loads(new)["email"] == "ab12@example.com"
    assert out[:2] == sent[:2] or coding == "br"
    # nothing rewritten: the bytes as sent, even when the writer re-compressed them
    assert codec.as_sent(sent, None, write_back(parsed, {}), LIMIT) == sent
    if coding != "br":
        assert codec.as_sent(sent, None, codec.encode(parsed.decoded, coding), LIMIT) == sent


def test_a_declared_encoding_and_a_plain_body_are_left_to_the_writer():
    sent = gzip.compress(b'{"a":1}')
    assert codec.as_sent(sent, "gzip", b"XX", LIMIT) == b"XX"
    assert codec.as_sent(b'{"a":1}', None, b'{"a":2}', LIMIT) == b'{"a":2}'
    assert codec.as_sent(b"\x1f\x8bnot gzip at all", None, b"new", LIMIT) == b"new"  # magic bytes by chance
    already = gzip.compress(b'{"a":2}')
    assert codec.as_sent(sent, None, already, LIMIT) == already


@pytest.mark.parametrize("new", ["[DEVICE_ID_1]", "[…]", "71u50811-kgpy-4c1d-9b2a-0123456789ab", "•••••••89ab"])
def test_a_uuid_is_written_back_as_a_valid_uuid_in_every_format(new):
    """Seen: device and anonymous ids became invalid UUIDs (`71u50811-kgpy-…`)."""
    import uuid

    dev = "71A50811-3F2E-4C1D-9B2A-0123456789AB"
    out = _rewrite({"device_id": dev, "n": 1}, {"json:$.device_id": new})["device_id"]
    assert uuid.UUID(out).version == 4 and out.isupper() and out != dev
    form = write_back(parse_body(f"cid={dev.lower()}&x=1".encode(), "application/x-www-form-urlencoded", None,
                                 BodyLimits()), {"form:cid": new}).decode()
    cid = form.split("&")[0].split("=")[1]
    assert uuid.UUID(cid).version == 4 and cid.islower() and form.endswith("&x=1")
    from guardian_proxy.bodies import rewrite_url

    url = rewrite_url(f"https://t.example/c?uid={dev}&v=2", {"query:uid": new})
    assert uuid.UUID(url.split("uid=")[1].split("&")[0]) and url.endswith("&v=2")


def test_the_evaluation_puts_a_decompressed_rewrite_back_in_the_sniffed_compression():
    """The session and agent stages serialise a chat body without knowing it came gzip-compressed with no
    Content-Encoding (`gz=1`): the evaluation re-compresses the rewrite before it is signed again and applied (the
    addon puts on the wire exactly the bytes decided)."""
    from guardian_proxy.pipeline import compressed_as_sent
    from guardian_proxy.types import Action, Decision, RawRequest, Rewrite

    def decided(body: bytes) -> Decision:
        return Decision(action="transform", six=Action(domain="t.example", host="t.example"), rewrite=Rewrite(body=body))

    sent = gzip.compress(b'{"q":"mail homary@yahoo.com"}')
    req = RawRequest(method="POST", url="https://t.example/e?gz=1", headers=[("content-type", "text/plain")], body=sent)
    new = b'{"q":"mail ab12@example.com"}'
    given = decided(new)
    dec = compressed_as_sent(req, given, LIMIT)
    assert dec.rewrite.body[:2] == b"\x1f\x8b" and gzip.decompress(dec.rewrite.body) == new
    assert given.rewrite.body == new  # a new decision: the one given is left as it was
    same = compressed_as_sent(req, decided(gzip.decompress(sent)), LIMIT)
    assert same.rewrite.body == sent  # nothing rewritten: the bytes as sent
