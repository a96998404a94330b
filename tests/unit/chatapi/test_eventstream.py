"""The AWS event-stream framer: every header type, CRCs and lengths, cut at every byte, cross-checked
against botocore's own parser (botocore/eventstream.py), payload rewrites, chunk unwrapping, corruption."""

import base64
import json
import struct
import uuid

import pytest
from botocore.eventstream import EventStreamBuffer

from guardian_proxy.chatapi import eventstream as es
from guardian_proxy.chatapi.eventstream import EventStreamFramer, Header

UID = uuid.UUID("12345678-1234-5678-1234-567812345678")
ALL_TYPES = [Header("t", es.BOOL_TRUE, True), Header("f", es.BOOL_FALSE, False), Header("b", es.BYTE, -7),
             Header("s", es.SHORT, -1234), Header("i", es.INT, 2 ** 31 - 1), Header("l", es.LONG, -(2 ** 62)),
             Header("bytes", es.BYTES, b"\x00\xffraw"), Header(":event-type", es.STRING, "contentBlockDelta"),
             Header("ts", es.TIMESTAMP, 1_700_000_000_123), Header("id", es.UUID, UID),
             Header(":content-type", es.STRING, "application/json"), Header(":message-type", es.STRING, "event")]


def botocore_messages(raw: bytes):
    buf = EventStreamBuffer()
    buf.add_data(raw)
    return list(buf)


def feed_all(framer, raw: bytes, step: int):
    out = []
    for i in range(0, len(raw), step):
        out += framer.feed(raw[i:i + step])
    return out


def test_every_header_type_round_trips_and_botocore_reads_it():
    payload = b'{"contentBlockIndex":0,"delta":{"text":"Hi \xc3\xa9"}}'
    raw = es.encode_message(ALL_TYPES, payload)
    (msg,) = botocore_messages(raw)  # botocore checks both CRCs and the lengths
    assert msg.payload == payload
    assert msg.headers == {"t": True, "f": False, "b": -7, "s": -1234, "i": 2 ** 31 - 1, "l": -(2 ** 62),
                           "bytes": b"\x00\xffraw", ":event-type": "contentBlockDelta", "ts": 1_700_000_000_123,
                           "id": UID.bytes, ":content-type": "application/json", ":message-type": "event"}
    ev = es.decode_message(raw)
    assert [(h.name, h.type, h.value) for h in ev.headers] == [(h.name, h.type, h.value) for h in ALL_TYPES]
    assert ev.name == "contentBlockDelta" and ev.payload == payload and ev.raw == raw
    assert es.encode_headers(ev.headers) == ev.raw_headers  # headers written back byte for byte
    total, hlen = struct.unpack(">II", raw[:8])
    assert total == len(raw) and hlen == len(ev.raw_headers)


@pytest.mark.parametrize("step", [1, 2, 3, 7, 16, 100, 10 ** 6])
def test_messages_cut_anywhere_come_out_whole(step):
    msgs = [es.event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": f"piece {i}"}})
            for i in range(5)] + [es.encode_message(ALL_TYPES, b"")]
    raw = b"".join(msgs)
    fr = EventStreamFramer()
    evs = feed_all(fr, raw, step)
    assert [e.raw for e in evs] == msgs and fr.rest() == b"" and not fr.overflow
    assert [e.obj["delta"]["text"] for e in evs[:5]] == [f"piece {i}" for i in range(5)]
    assert evs[5].obj is None  # an empty payload is not JSON: passes as received


def test_encode_rewrites_only_the_payload_and_recomputes_crcs_and_lengths():
    raw = es.encode_message(ALL_TYPES, json.dumps({"delta": {"text": "Maria"}, "p": "abc"}).encode())
    fr = EventStreamFramer()
    (ev,) = fr.feed(raw)
    ev.obj["delta"]["text"] = "Alexander Smithson"
    out = fr.encode(ev, ev.name, ev.obj)
    (msg,) = botocore_messages(out)
    assert json.loads(msg.payload) == {"delta": {"text": "Alexander Smithson"}, "p": "abc"}
    assert out[12:12 + len(ev.raw_headers)] == ev.raw_headers  # the very same header bytes
    assert len(out) == struct.unpack(">I", out[:4])[0] and len(out) > len(raw)


def test_unwrapped_chunks_expose_the_model_chunk_and_wrap_it_back_with_the_padding():
    inner = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi Maria"}}
    raw = es.event_message("chunk", inner, wrap=True, p="abcdefgh")
    fr = EventStreamFramer(unwrap=True)
    (ev,) = fr.feed(raw)
    assert ev.name == "chunk" and ev.obj == inner and ev.envelope["p"] == "abcdefgh"
    ev.obj["delta"]["text"] = "Hi Ann"
    (msg,) = botocore_messages(fr.encode(ev, ev.name, ev.obj))
    outer = json.loads(msg.payload)
    assert outer["p"] == "abcdefgh" and json.loads(base64.b64decode(outer["bytes"]))["delta"]["text"] == "Hi Ann"
    # without unwrapping, the envelope itself is the object
    (plain,) = EventStreamFramer().feed(raw)
    assert set(plain.obj) == {"bytes", "p"}


def test_new_events_take_the_headers_of_the_last_event_seen():
    fr = EventStreamFramer()
    fr.feed(es.event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x"}}))
    (msg,) = botocore_messages(fr.encode(None, "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "y"}}))
    assert msg.headers == {":event-type": "contentBlockDelta", ":content-type": "application/json",
                           ":message-type": "event"}
    fresh = EventStreamFramer(unwrap=True)  # nothing seen yet: the standard three headers, wrapped
    (msg,) = botocore_messages(fresh.encode(None, "chunk", {"generation": "z"}))
    assert msg.headers[":event-type"] == "chunk"
    assert json.loads(base64.b64decode(json.loads(msg.payload)["bytes"])) == {"generation": "z"}


def test_exceptions_are_named_by_their_exception_type():
    raw = es.exception_message("throttlingException", "Too many requests")
    (ev,) = EventStreamFramer().feed(raw)
    assert ev.name == "throttlingException" and ev.message_type == "exception"
    assert ev.obj == {"message": "Too many requests"}
    (msg,) = botocore_messages(raw)
    assert msg.headers[":exception-type"] == "throttlingException"


@pytest.mark.parametrize("where", ["prelude", "message"])
def test_a_corrupt_message_stops_framing_and_the_rest_passes_as_received(where):
    good = es.event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}})
    bad = bytearray(es.event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "no"}}))
    bad[9 if where == "prelude" else 20] ^= 0xFF
    fr = EventStreamFramer()
    evs = fr.feed(good + bytes(bad) + good)
    assert [e.raw for e in evs] == [good] and fr.overflow
    assert fr.rest() == bytes(bad) + good


def test_an_overlong_message_and_non_json_payloads():
    big = es.encode_message(es.string_headers(event_type="chunk"), b"x" * 5000)
    fr = EventStreamFramer(max_bytes=4096)
    assert fr.feed(big[:100]) == [] and fr.overflow and fr.rest() == big[:100]
    raw = es.encode_message(es.string_headers(event_type="audio", content_type="application/octet-stream"), b"{}")
    (ev,) = EventStreamFramer().feed(raw)
    assert ev.obj is None  # a non-JSON content type is never parsed
    raw = es.event_message("chunk", {"x": 1}).replace(b'{"x":1}', b'{"x":2}')  # the message CRC is now wrong
    fr = EventStreamFramer()
    assert fr.feed(raw) == [] and fr.overflow and fr.rest() == raw
    short = es.event_message("chunk", {"x": 1})[:-1]  # one byte missing: waits for it
    fr = EventStreamFramer()
    assert fr.feed(short) == [] and not fr.overflow and fr.rest() == short


def test_a_chunk_that_is_not_base64_json_passes_unparsed():
    raw = es.encode_message(es.string_headers(event_type="chunk", content_type="application/json",
                                              message_type="event"), b'{"bytes":"not base64!!"}')
    (ev,) = EventStreamFramer(unwrap=True).feed(raw)
    assert ev.obj is None and ev.raw == raw
