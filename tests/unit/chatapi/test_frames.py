"""Google's length-prefixed frames (`chatapi.frames.GoogleFramer`), JSONStyle and split_json_values.

The reader the assertions use is `tests.support.ws_chat_server.parse_gemini_reply`, written independently
of the framer (it counts UTF-16 units on the decoded text and insists that every count ends exactly where
the next frame begins)."""

import json

import pytest

from guardian_proxy.chatapi.frames import (
    XSSI,
    GoogleFramer,
    JSONStyle,
    split_json_values,
    utf16_len,
    utf16_units,
)
from guardian_proxy.chatapi.sse import MAX_EVENT_BYTES
from tests.support.ws_chat_server import google_frame, parse_gemini_reply

CAPTURED = (")]}'\n\n122\n"
            '[["wrb.fr",null,null,null,null,[13,null,[["type.googleapis.com/assistant.boq.bard.application.'
            'BardErrorInfo",[1096]]]]]]'
            "\n56\n" + '[["di",192],["af.httprm",191,"8196459853603899163",2]]'
            + "\n25\n" + '[["e",4,null,null,216]]' + "\n").encode()


def small_reply(texts: list[str]) -> bytes:
    frames = [")]}'\n\n"]
    for t in texts:
        inner = [None, ["c_1", "r_1"], None, None, [["rc_1", [t], None, [1], "en"]]]
        frames.append(google_frame([["wrb.fr", None, json.dumps(inner, ensure_ascii=False, separators=(",", ":"))]]))
    return "".join(frames).encode()


def feed_all(fr: GoogleFramer, data: bytes, cuts: list[int]) -> list:
    evs, last = [], 0
    for c in cuts + [len(data)]:
        evs += fr.feed(data[last:c])
        last = c
    return evs


@pytest.mark.parametrize("s", ["abc", "é", "日本語", "\U0001F600", "a\U0001F600b€", "\n[\"x\"]\n"])
def test_utf16_counts(s):
    assert utf16_units(s.encode()) == len(s.encode("utf-16-le")) // 2 == utf16_len(s)


def test_the_captured_reply_is_read_as_google_counts_it():
    """A real 216-byte reply (kept as a fixture by an open-source client): counts = JSON + 2 newlines."""
    fr = GoogleFramer()
    evs = fr.feed(CAPTURED)
    lines = CAPTURED[len(XSSI):].split(b"\n")  # ['', '', '122', json, '56', json, '25', json, '']
    assert [e.raw for e in evs] == [XSSI, b"\n\n122\n" + lines[3] + b"\n", b"56\n" + lines[5] + b"\n",
                                    b"25\n" + lines[7] + b"\n"]
    assert b"".join(e.raw for e in evs) + fr.rest() == CAPTURED
    assert evs[3].obj == [["e", 4, None, None, 216]] and fr.in_bytes == 216 == fr.in_units
    assert len(parse_gemini_reply(CAPTURED)) == 3  # the test's own reader agrees


def test_every_cut_gives_the_same_events_byte_for_byte():
    data = small_reply(["Hé", "Hé \U0001F600 wo", "Hé \U0001F600 world, 日本"])
    whole = [(e.raw, e.obj) for e in GoogleFramer().feed(data)]
    assert len(whole) == 4 and whole[1][1][0][2][4][0][1] == ["Hé"]  # the inner JSON is parsed in obj
    for cut in range(len(data) + 1):
        fr = GoogleFramer()
        evs = feed_all(fr, data, [cut])
        assert [(e.raw, e.obj) for e in evs] == whole, cut
        assert fr.rest() == b""
    fr = GoogleFramer()
    evs = feed_all(fr, data, list(range(1, len(data))))  # one byte at a time
    assert [(e.raw, e.obj) for e in evs] == whole


def test_encode_recomputes_the_count_and_both_json_levels():
    data = small_reply(["Alex Smith says hi \U0001F600"])
    fr = GoogleFramer()
    evs = fr.feed(data)
    ev = evs[1]
    ev.obj[0][2][4][0][1][0] = 'María "Gonzalez"\n日本 \U0001F600'
    out = b"".join([evs[0].raw, fr.encode(ev, None, ev.obj)])
    objs = parse_gemini_reply(out)
    inner = json.loads(objs[0][0][2])
    assert inner[4][0][1][0] == 'María "Gonzalez"\n日本 \U0001F600' and inner[1] == ["c_1", "r_1"]
    assert out.startswith(b")]}'\n\n")  # the whitespace before the count stays where it was


def test_google_escapes_and_style_are_kept_when_rewritten():
    inner = json.dumps([None, ["c_1"], None, None, [["rc", ["Alex Smith"]]], "https://x?a=1&b=<2>"],
                       separators=(",", ":"))
    g = inner.replace("=", "\\u003d").replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    data = (")]}'\n\n" + google_frame([["wrb.fr", None, g]])).encode()
    fr = GoogleFramer()
    evs = fr.feed(data)
    assert fr.encode(evs[1], None, evs[1].obj) == evs[1].raw  # unchanged value: the same bytes
    evs[1].obj[0][2][4][0][1][0] = "Maria Gonzalez"
    new = fr.encode(evs[1], None, evs[1].obj)
    assert b"\\\\u003d" in new and b"=" not in new and b"\\\\u0026" in new
    assert json.loads(parse_gemini_reply(evs[0].raw + new)[0][0][2])[5] == "https://x?a=1&b=<2>"


def test_closing_frame_total_follows_rewritten_frames():
    data = small_reply(["Alex Smith"]) + google_frame([["di", 9]]).encode()
    units = len(data.decode().encode("utf-16-le")) // 2
    for _ in range(3):
        last = google_frame([["e", 3, None, None, units]]).encode()
        units = len((data + last).decode().encode("utf-16-le")) // 2
    data += last
    assert parse_gemini_reply(data)  # consistent to begin with
    fr = GoogleFramer()
    evs = fr.feed(data)
    out = b""
    for ev in evs:
        if ev.obj and ev.obj[0][0] == "wrb.fr":
            ev.obj[0][2][4][0][1][0] = "Maria Gonzalez, a much longer name than before " * 5
            out += fr.encode(ev, None, ev.obj)
        else:
            out += ev.raw  # the `e` frame's raw is computed when it is written out
    objs = parse_gemini_reply(out)  # asserts the total equals the new length
    assert objs[-1][0][4] > units
    # nothing rewritten: the closing frame stays as it came
    fr = GoogleFramer()
    assert b"".join(e.raw for e in fr.feed(data)) == data


def test_a_frame_that_is_not_json_passes_and_framing_goes_on():
    bad = "\n{not json\n"
    data = (")]}'\n" + f"{utf16_len(bad)}{bad}" + google_frame([["di", 1]])).encode()
    fr = GoogleFramer()
    evs = fr.feed(data)
    assert [e.obj for e in evs] == [None, None, [["di", 1]]] and b"".join(e.raw for e in evs) == data


@pytest.mark.parametrize("junk", [b"<html>oops</html>", b"12345678901234567890\n[]", b"[[\"wrb.fr\"]]"])
def test_not_frames_sets_overflow(junk):
    fr = GoogleFramer()
    evs = fr.feed(b")]}'\n\n" + junk)
    assert fr.overflow and b"".join(e.raw for e in evs) + fr.rest() == b")]}'\n\n" + junk


def test_a_count_that_splits_a_surrogate_pair_is_not_framing():
    body = "\n[\"\U0001F600\"]\n"
    data = f"{utf16_len(body) - 4}{body}".encode()  # ends between the emoji's two units
    fr = GoogleFramer()
    assert fr.feed(data) == [] and fr.overflow


def test_no_xssi_prefix_and_partial_prefix():
    data = google_frame([["di", 1]]).encode()
    assert [e.obj for e in GoogleFramer().feed(data)] == [[["di", 1]]]
    fr = GoogleFramer()
    assert fr.feed(b")]") == [] and not fr.overflow
    assert [e.raw for e in fr.feed(b"}'\n")] == [XSSI]


def test_an_incomplete_frame_waits_and_rest_hands_it_back():
    data = small_reply(["Alex"])
    fr = GoogleFramer()
    evs = fr.feed(data[:-5])
    assert len(evs) == 1 and fr.rest() == data[len(XSSI):-5]


def test_overlong_frame_overflows():
    fr = GoogleFramer()
    fr.feed(b")]}'\n\n%d\n[\"" % (MAX_EVENT_BYTES + 100) + b"x" * (MAX_EVENT_BYTES + 10))
    assert fr.overflow


@pytest.mark.parametrize("text", [
    '{"a":1,"b":[1,2,"x"],"c":{"d":null}}',
    '{"a": 1, "b": [1, 2, "x"], "c": {"d": null}}',
    '{"t": "J\\u00fcrgen \\u65e5\\ud83d\\ude00", "u": "a/b"}',
    '{"t":"Jürgen 日 \U0001F600","u":"a\\/b"}',
    '[null,"[[\\"x\\u003dy\\u0026z\\",0]]"]',
    '{"k":"<b>&amp;\'q\'</b>","n":[1.5,-2,1e+20]}',
    '[]',
])
def test_json_style_reproduces_its_text(text):
    assert JSONStyle.of(text).dumps(json.loads(text)) == text


def test_json_style_keeps_values_when_new_text_has_escaped_characters():
    st = JSONStyle.of('{"u":"x\\u003dy","t":"a"}')
    out = st.dumps({"u": "x=y", "t": "Jürgen \"=\" \\ /"})
    assert json.loads(out) == {"u": "x=y", "t": "Jürgen \"=\" \\ /"} and "=" not in out


def test_split_json_values():
    assert split_json_values(b'{"event":"a"}{"event":"b"}\x1e {"c":1}\n') == [{"event": "a"}, {"event": "b"},
                                                                              {"c": 1}]
    assert split_json_values('{"a":1}') == [{"a": 1}]
    assert split_json_values(b'{"a":1}{"b"') is None and split_json_values(b"\xff") is None
    assert split_json_values(b"  ") is None
