"""Gemini web (`gemini_web`): the StreamGenerate form body read and written back, and its framed reply
de-masked through the real StreamDemasker with chunk boundaries everywhere."""

import json
from urllib.parse import quote, urlencode

import pytest

from guardian_proxy import chatapi
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker
from tests.support import llm_server
from tests.support.ws_chat_server import gemini_reply, gemini_text, google_frame, parse_gemini_reply

PATH = ("/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate"
        "?bl=boq_assistant-bard-web-server_20260507.06_p3&f.sid=-300856583778447260&hl=en&_reqid=2405763&rt=c")
FORM = "application/x-www-form-urlencoded;charset=UTF-8"
DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
D = chatapi.dialects.get("gemini_web")


def inner_of(prompt: str, cid: str = "c_0b94bb290d45c230") -> list:
    """The inner array as the web app sends it (shape from requests copied out of the browser)."""
    conv = [cid, "r_de7dae4c5531f0e6", "rc_f73de017c4246f0c", None, None, None, None, None, None,
            "AwAAAAAAAAAQANM7mBjXKZSZPNM7yBk"] if cid else ["", "", "", None, None, None, None, None, None, ""]
    return [[prompt, 0, None, None, None, None, 0], ["en"], conv, "!jo2ljdXNAAaWZrTItmZCkubkh-token", None,
            None, [1], 0, [], None, 1, 0]


def browser_body(inner: list, at: str = "AJvLN6M0lWxQ:1765000000000") -> bytes:
    """encodeURIComponent(JSON.stringify(...)) twice over, `&at=…&` at the end, as the web app sends it."""
    outer = json.dumps([None, json.dumps(inner, ensure_ascii=False, separators=(",", ":"))], ensure_ascii=False,
                       separators=(",", ":"))
    return f"f.req={quote(outer, safe=chr(33) + '~*()' + chr(39) + '-_.')}&at={quote(at, safe='')}&".encode()


def parse(body: bytes, ct: str | None = FORM, host: str = "gemini.google.com", path: str = PATH):
    return chatapi.recognise_body(host, path, body, ct)


PROMPT = 'Hi, I\'m Alex Smith (alex.smith@example.net). My SSN is 123-45-6789. "Plan" a trip! 😀 café (a=b&c)'


def test_browser_body_slots_conversation_and_byte_exact_round_trip():
    body = browser_body(inner_of(PROMPT))
    assert b"%20" in body and b"!jo2" in body and b"+" not in body  # encodeURIComponent's style
    chat = parse(body)
    assert chat.kind == "gemini_web" and chat.stream and not chat.history and chat.turns == 1
    assert [(s.parts, s.text, s.role, s.turn) for s in chat.slots] == [(("inner", 0, 0), PROMPT, "user", 1)]
    assert chat.previous == "c_0b94bb290d45c230" and chat.conversation is None
    assert D.serialise(chat) == body


@pytest.mark.parametrize("enc", ["urlencode", "python-json"])
def test_python_clients_bodies_round_trip(enc):
    inner = inner_of(PROMPT, cid="")
    if enc == "urlencode":  # gemini_webapi: orjson (compact) + urlencode (quote_plus), `at` first
        freq = json.dumps([None, json.dumps(inner, ensure_ascii=False, separators=(",", ":"))], ensure_ascii=False,
                          separators=(",", ":"))
        body = urlencode({"at": "tok:1", "f.req": freq}).encode()
        assert b"+" in body
    else:  # json.dumps defaults (", " and ASCII escapes) as several Python clients send it
        body = urlencode({"f.req": json.dumps([None, json.dumps(inner)])}).encode()
        assert b"%5Cu00e9" in body
    chat = parse(body)
    assert chat.slots[0].text == PROMPT and chat.previous is None  # a new chat: no cid yet
    assert D.serialise(chat) == body


def test_rewritten_prompt_leaves_every_other_field_alone():
    body = browser_body(inner_of(PROMPT))
    chat = parse(body)
    new = 'Hi, I\'m Jürgen "Q" Zed\n\\ (q@x.de). SSN [BLOCKED] 😀 &=+%'
    chatapi.set_text(chat.data, chat.slots[0].parts, new)
    out = D.serialise(chat)
    assert out.endswith(b"&at=AJvLN6M0lWxQ%3A1765000000000&") and out.startswith(b"f.req=%5Bnull%2C%22%5B%5B")
    again = parse(out)
    assert again.slots[0].text == new
    assert again.data["inner"][1:] == inner_of(PROMPT)[1:]  # tokens, conversation, flags untouched
    assert again.data["inner"][0][1:] == inner_of(PROMPT)[0][1:]
    assert out == browser_body(again.data["inner"])  # still exactly how the browser writes it


@pytest.mark.parametrize("body,ct", [
    (b"f.req=%5B%5B%5B%22ESY5D%22%2C%22%5B%5B%5B%5C%22bard_activity_enabled%5C%22%5D%5D%5D%22%2Cnull%2C%22generic"
     b"%22%5D%5D%5D&at=x&", FORM),  # a batchexecute body: not a prompt
    (b"at=x&other=1", FORM),
    (browser_body(inner_of("hi")), "application/json"),
    (b"f.req=%5Bnull%2C%22not%20json%22%5D", FORM),
])
def test_not_a_chat(body, ct):
    assert parse(body, ct) is None


def test_address_matching():
    body = browser_body(inner_of("hi"))
    assert parse(body, None).kind == "gemini_web"  # no content type: the shape decides
    assert parse(body, host="gemini.google.com", path="/u/1" + PATH).kind == "gemini_web"
    assert parse(body, host="bard.google.com").kind == "gemini_web"
    assert parse(body, host="evil.example") is None
    assert parse(body, path="/_/BardChatUi/data/batchexecute?rpcids=ESY5D") is None


# ---------------------------------------------------------------------------------------------- replies

SAID_SURROGATE = "Hi, I'm Alex Smith (alex.smith@example.net), plan Lisbon."
SAID_REAL = "Hi, I'm Maria Gonzalez (maria.g@gmail.com), plan Lisbon."


def demask_stream(raw: bytes, cuts) -> bytes:
    sd = StreamDemasker("gemini_web", DM, D.framer("application/json; charset=utf-8"))
    out, last = b"", 0
    for c in list(cuts) + [len(raw)]:
        out += sd(raw[last:c])
        last = c
    return out + sd(b"")


def expected_frames(raw_surrogate: bytes) -> list:
    """Independently: each frame's inner strings de-masked whole (the text is cumulative)."""
    out = []
    for obj in parse_gemini_reply(raw_surrogate):
        for item in obj:
            if item[:1] == ["wrb.fr"]:
                inner = json.loads(item[2])
                inner[4][0][1][0] = DM.full(inner[4][0][1][0])
                inner[4][0][37][0][0] = DM.full(inner[4][0][37][0][0])
                item[2] = inner
        out.append([it[:4] if it[:1] == ["e"] else it for it in obj])
    return out


def as_compared(objs: list) -> list:
    """Inner JSON parsed; the closing frame's total left out (parse_gemini_reply checked it against the
    length of what was read)."""
    return [[[*it[:2], json.loads(it[2]), *it[3:]] if it[:1] == ["wrb.fr"] else it[:4] if it[:1] == ["e"] else it
             for it in o] for o in objs]


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 1000, 10**6])
def test_reply_demasked_in_chunks_of_every_size(step):
    raw = "".join(gemini_reply(SAID_SURROGATE)).encode()
    out = demask_stream(raw, range(step, len(raw), step))
    objs = parse_gemini_reply(out)  # every count (and the closing total) right for the new text
    assert as_compared(objs) == expected_frames(raw)
    text, inner = gemini_text(objs)
    real, _ = llm_server.answer({"prompt": SAID_REAL})
    assert text == real + " \U0001F600 café"
    assert inner[4][0][37][0][0] == "Thinking about Maria Gonzalez"
    assert b"\\\\u003d" in out  # Google's escapes kept
    # a whole surrogate never reaches the client; a frame whose text so far ends inside one shows that part
    # as it came (the text is cumulative: the next frame has it whole, de-masked)
    assert b"Alex Smith" not in out and b"ALEX SMITH" not in out and b"alex.smith@example.net" not in out


def small_reply() -> bytes:
    texts = ["Hi Al", "Hi Alex Sm", "Hi Alex Smith 😀, mail alex.smith@exam", "Hi Alex Smith 😀, mail "
             "alex.smith@example.net é"]
    frames = [")]}'\n\n"]
    for t in texts:
        inner = [None, ["c_9", "r_9"], None, None, [["rc_9", [t]]]]
        frames.append(google_frame([["wrb.fr", None, json.dumps(inner, ensure_ascii=False, separators=(",", ":"))]]))
    frames.append(google_frame([["di", 7]]))
    return "".join(frames).encode()


def test_reply_demasked_with_a_cut_at_every_byte():
    raw = small_reply()
    want = demask_stream(raw, [])
    finals = [json.loads(o[0][2])[4][0][1][0] for o in parse_gemini_reply(want) if o[0][0] == "wrb.fr"]
    assert finals == ["Hi Al", "Hi Maria Sm", "Hi Maria Gonzalez 😀, mail alex.smith@exam",
                      "Hi Maria Gonzalez 😀, mail maria.g@gmail.com é"]
    for cut in range(len(raw) + 1):
        assert demask_stream(raw, [cut]) == want, cut
    assert demask_stream(raw, range(1, len(raw))) == want


def test_whole_body_and_passthrough():
    raw = small_reply()
    sd = StreamDemasker("gemini_web", DM, D.framer("application/json"))
    assert sd(raw) + sd(b"") == demask_stream(raw, [])
    untouched = ")]}'\n\n" + google_frame([["wrb.fr", None, "[null,[\"c_1\"],null,null,[[\"rc\",[\"hello\"]]]]"]])
    assert demask_stream(untouched.encode(), []) == untouched.encode()  # nothing to change: byte for byte
    junk = b")]}'\n\n<html>" + b"Alex Smith" * 3
    assert demask_stream(junk, [9]) == junk
    assert D.framer("text/html; charset=utf-8") is None


def test_aliases_name_the_conversation():
    raw = small_reply()
    seen = []
    sd = StreamDemasker("gemini_web", DM, D.framer(None), on_alias=seen.append)
    sd(raw)
    assert set(seen) == {"c_9"}
