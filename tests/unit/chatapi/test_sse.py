"""SSE and NDJSON framing: whole events out of arbitrary chunks, original bytes kept."""

from guardian_proxy.chatapi.sse import MAX_EVENT_BYTES, NDJSONFramer, SSEFramer, parse_event

STREAM = (b": keep-alive\n\n"
          b"event: content_block_delta\r\ndata: {\"a\": 1}\r\n\r\n"
          b"id: 7\ndata: {\"b\":\ndata:  2}\n\n"
          b"data: [DONE]\n\n")


def feed_all(framer, data: bytes, step: int):
    out = []
    for i in range(0, len(data), step):
        out += framer.feed(data[i:i + step])
    return out


def test_events_from_any_chunking_keep_their_bytes():
    for step in range(1, len(STREAM) + 1):
        evs = feed_all(SSEFramer(), STREAM, step)
        assert b"".join(e.raw for e in evs) == STREAM, step
        assert [e.obj for e in evs] == [None, {"a": 1}, {"b": 2}, "[DONE]"]
        assert evs[1].name == "content_block_delta" and evs[0].data is None


def test_serialise_replaces_data_and_keeps_other_lines():
    ev = parse_event(b"event: x\nid: 3\ndata: {\"t\":\ndata: 1}\n: note\n\n")
    assert ev.serialise('{"t":2}') == b"event: x\nid: 3\ndata: {\"t\":2}\n: note\n\n"


def test_non_json_data_and_invalid_utf8_pass():
    assert parse_event(b"data: hello\n\n").obj is None
    ev = parse_event(b"data: \xff\xfe\n\n")
    assert ev.obj is None and ev.raw == b"data: \xff\xfe\n\n"


def test_cr_at_chunk_end_waits_for_its_lf():
    f = SSEFramer()
    assert f.feed(b"data: {}\r\n\r") == []
    (ev,) = f.feed(b"\n")
    assert ev.raw == b"data: {}\r\n\r\n"


def test_overflow_and_rest():
    f = SSEFramer()
    f.feed(b"data: " + b"x" * (MAX_EVENT_BYTES + 1))
    assert f.overflow and len(f.rest()) > MAX_EVENT_BYTES and f.rest() == b""


def test_ndjson_lines():
    data = b'{"response":"a","done":false}\n{"response":"b","done":true}\n{"partial'
    f = NDJSONFramer()
    evs = feed_all(f, data, 3)
    assert [e.obj for e in evs] == [{"response": "a", "done": False}, {"response": "b", "done": True}]
    assert f.rest() == b'{"partial'
