"""The one reply filter (guardian_proxy/session/reply.py) with a real SessionStage (a stand-in detector: no
models), on the API shapes of tests/support/llm_server.py and the chat replies recorded in
../shared/data/realtraffic (read at test time, never copied here): one place decides the route; a streamed reply
gives the same bytes in any chunking as fed whole; a whole body is held within its bound, decoded within its
own, de-masked, guarded and encoded again; whatever it cannot read passes exactly as received."""

from __future__ import annotations

import gzip
import json
import logging
import re
from pathlib import Path

import pytest

from guardian_proxy import chatapi
from guardian_proxy.agents.shapes import tool_calls
from guardian_proxy.agents.stream import StreamGuard
from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.session import SessionStage
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.reply import Streamed, Whole, is_stream, open_messages, open_reply, read_whole
from guardian_proxy.types import ENTITIES, Action, RawRequest, Span
from tests.support import llm_server as srv

NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
SAID = f"Hi, I'm {NAME} ({EMAIL}). Plan a trip."
STEPS = [1, 3, 7, 64, 10**6]
CASSETTES = Path(__file__).resolve().parents[4] / "shared" / "data" / "realtraffic" / "cassettes"


def detect(fields):
    """A stand-in for the NER: the two values above, wherever they occur."""
    out = []
    for f in fields:
        for value, entity in ((NAME, "PERSON"), (EMAIL, "EMAIL_ADDRESS")):
            for m in re.finditer(re.escape(value), f.text):
                cat, direct = ENTITIES[entity]
                out.append(Span(path=f.path, start=m.start(), end=m.end(), entity=entity, category=cat, text=value,
                                direct=direct))
    return out


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    st = SessionStage(load_settings(state_dir=tmp_path_factory.mktemp("state")), load_factor_tables(None),
                      detect=detect)
    yield st
    st.close()


def session(stage, url="https://api.openai.com/v1/chat/completions", body=None) -> tuple[dict, dict]:
    """A turn of a real session: (the decision's metadata with its id, the body as it left)."""
    body = body or {"model": "m", "messages": [{"role": "user", "content": SAID}]}
    req = RawRequest(method="POST", url=url, body=json.dumps(body).encode(),
                     headers=[("content-type", "application/json"), ("authorization", "Bearer sk-reply")])
    action = Action(domain="openai.com", host=req.host, recipient="ai_service")
    chat = stage.recognise(req, action)
    d = stage.decide(req, chat, action, None)
    sent = json.loads(d.rewrite.body)
    assert NAME not in d.rewrite.body.decode()
    return {**d.extra, "id": d.id}, sent


def feed(f, raw: bytes, step: int) -> bytes:
    return b"".join(f.feed(raw[i:i + step]) for i in range(0, len(raw), step)) + f.end()


def sse_text(raw: bytes) -> str:
    out = []
    for block in raw.decode().split("\n\n"):
        for ln in block.splitlines():
            if ln.startswith("data: {"):
                for c in json.loads(ln[6:]).get("choices") or []:
                    out.append((c.get("delta") or {}).get("content") or "")
    return "".join(out)


# ------------------------------------------------------------------ one place decides the route

def test_one_place_decides_the_route(stage):
    meta, _ = session(stage)
    assert isinstance(open_reply(stage, meta, "text/event-stream", None), Streamed)
    gz = open_reply(stage, meta, "text/event-stream; charset=utf-8", "gzip")
    assert isinstance(gz, Streamed) and gz.decodes and gz.streamed
    assert not open_reply(stage, meta, "text/event-stream", "identity").decodes
    whole = open_reply(stage, meta, "application/json", "gzip")
    assert isinstance(whole, Whole) and not whole.streamed and not whole.decodes
    assert isinstance(open_reply(stage, meta, "application/json", "gzip, br"), Whole)  # decodes whole only
    assert open_reply(stage, meta, "text/event-stream", "gzip, br") is None  # a stream it cannot decode as it comes
    assert open_reply(stage, meta, "application/vnd.amazon.eventstream", None) is None  # not openai_chat's framing
    assert open_reply(stage, meta, "text/html", None) is None and open_reply(stage, meta, None, None) is None
    assert open_reply(stage, {**meta, "session": None}, "application/json", None) is None
    assert open_reply(None, meta, "application/json", None) is None
    ollama, _ = session(stage, "http://localhost:11434/api/chat")
    assert isinstance(open_reply(stage, ollama, "application/x-ndjson", None), Streamed)
    assert is_stream("Text/Event-Stream") and is_stream("application/vnd.amazon.eventstream") and \
        not is_stream("application/json")


# ------------------------------------------------------------------ streamed

@pytest.mark.parametrize("step", STEPS)
def test_a_stream_in_any_chunking_gives_the_bytes_of_the_whole_body(stage, step):
    meta, sent = session(stage)
    raw = b"".join(srv.openai_chat(sent, True))
    out = feed(open_reply(stage, meta, "text/event-stream", None), raw, step)
    assert out == open_reply(stage, meta, "text/event-stream", None).whole(raw)
    text = sse_text(out)
    assert f"Noted, {NAME}." in text and f"{NAME.upper()} is on file" in text and f"({EMAIL})" in text
    assert out.startswith(b": keep-alive\n\n") and out.endswith(b"data: [DONE]\n\n")


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_a_compressed_stream_leaves_uncompressed_and_demasked(stage, coding):
    meta, sent = session(stage)
    raw = b"".join(srv.openai_chat(sent, True))
    f = open_reply(stage, meta, "text/event-stream", coding)
    assert f.decodes
    out = feed(f, _encode(raw, coding), 5)
    assert f"Noted, {NAME}." in sse_text(out) and out.endswith(b"data: [DONE]\n\n")


def test_an_ndjson_stream_is_demasked(stage):
    meta, sent = session(stage, "http://localhost:11434/api/chat")
    raw = b"".join(srv.ollama(sent, True, False))
    out = feed(open_reply(stage, meta, "application/x-ndjson", None), raw, 4)
    text = "".join(json.loads(ln)["message"]["content"] for ln in out.splitlines())
    assert text == srv.answer({"messages": [{"role": "user", "content": SAID}]})[0]


# ------------------------------------------------------------------ whole

@pytest.mark.parametrize("coding", [None, "gzip", "br"])
def test_a_whole_answer_is_held_then_decoded_demasked_and_encoded_as_it_came(stage, coding):
    meta, sent = session(stage)
    raw = json.dumps(srv.openai_chat(sent, False)).encode()
    wire = _encode(raw, coding)
    f = open_reply(stage, meta, "application/json", coding)
    assert f.fits(len(wire)) and f.feed(wire[:10]) == b"" and f.feed(wire[10:]) == b""  # held until the end
    out = f.end()
    body = json.loads(_decode(out, coding))
    assert body["choices"][0]["message"]["content"].startswith(f"Noted, {NAME}.")
    assert open_reply(stage, meta, "application/json", coding).whole(wire) == out


def test_a_whole_answer_with_nothing_to_demask_passes_byte_for_byte(stage):
    meta, _ = session(stage)
    wire = gzip.compress(b'{"choices": [{"message": {"content": "Nothing personal here."}}]}')
    assert open_reply(stage, meta, "application/json", "gzip").whole(wire) == wire


def test_a_whole_answer_over_the_bound_passes_as_received_with_one_log_line(stage, caplog):
    meta, sent = session(stage)
    raw = json.dumps(srv.openai_chat(sent, False)).encode()
    limits = load_settings().limits.model_copy(update={"max_inspected_response_bytes": 64})
    with caplog.at_level(logging.WARNING, "guardian_proxy"):
        f = open_reply(stage, meta, "application/json", None, limits=limits, host="api.openai.com")
        assert not f.fits(len(raw))
        f = open_reply(stage, meta, "application/json", None, limits=limits, host="api.openai.com")
        assert feed(f, raw, 50) == raw
    over = [r for r in caplog.records if "over the 64-byte bound" in r.getMessage()]
    assert len(over) == 2 and all("api.openai.com" in r.getMessage() for r in over)


def test_a_compression_bomb_or_a_broken_body_passes_as_received(stage, caplog):
    meta, _ = session(stage)
    limits = load_settings().limits.model_copy(update={"max_decoded_bytes": 1024})
    bomb = gzip.compress(b'{"a": "' + b"x" * 200_000 + b'"}')
    with caplog.at_level(logging.WARNING, "guardian_proxy"):
        assert open_reply(stage, meta, "application/json", "gzip", limits=limits).whole(bomb) == bomb
        assert open_reply(stage, meta, "application/json", "gzip").whole(b"not gzip at all") == b"not gzip at all"
    said = [r.getMessage() for r in caplog.records]
    assert any("decodes past the 1024-byte bound" in m for m in said) and any("left as is" in m for m in said)


def test_a_whole_body_in_a_stream_framing_is_one_chunk_and_the_end(stage):
    meta, sent = session(stage)
    raw = b"".join(srv.openai_chat(sent, True))
    assert read_whole(stage, meta, "text/event-stream", raw) == \
        open_reply(stage, meta, "text/event-stream", None).whole(raw)
    assert stage.demask_response(meta, raw, "text/event-stream") == read_whole(stage, meta, "text/event-stream", raw)
    assert read_whole(stage, meta, "application/json", b"") is None
    assert read_whole(stage, meta, "text/html", b"<p>hi</p>") is None


def test_gemini_streamed_as_one_json_array_is_demasked_like_its_sse_stream(stage):
    """streamGenerateContent without alt=sse: the same chunks as one JSON array (application/json): whole, and
    de-masked event by event, so it reads as the SSE stream does."""
    from tests.support import google_cohere_server as gsrv

    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    meta, sent = session(stage, url, {"contents": [{"role": "user", "parts": [{"text": SAID}]}]})
    assert meta["chat_api"] == "gemini"
    chunks = gsrv.gemini(sent, True)
    arr = json.dumps([json.loads(c.decode()[6:]) for c in chunks]).encode()
    f = open_reply(stage, meta, "application/json; charset=UTF-8", "gzip")
    assert isinstance(f, Whole)
    out = json.loads(gzip.decompress(feed(f, gzip.compress(arr), 11)))
    sse = open_reply(stage, meta, "text/event-stream", None).whole(b"".join(chunks))
    text = "".join(p.get("text", "") for o in out for c in o["candidates"] for p in c["content"]["parts"])
    streamed = "".join(p.get("text", "") for b in re.split(r"\r?\n\r?\n", sse.decode())
                       if b.startswith("data: ")
                       for c in json.loads(b[6:])["candidates"] for p in c["content"]["parts"])
    assert text == streamed and NAME in text


# ------------------------------------------------------------------ the agent guard runs through the same filter

class Agents:
    """The agent stage's two response entries, with the real `StreamGuard` and the real `tool_calls` shapes; its
    check replaces every tool call's arguments."""

    def __init__(self):
        self.calls = []

    def check(self, tool: str, args: str) -> str:
        self.calls.append((tool, args))
        return json.dumps({"checked": tool})

    def guard_stream(self, decision_id, kind):
        return StreamGuard(kind, self.check) if kind in ("openai_chat", "anthropic", "openai_responses") else None

    def guard_json(self, decision_id, kind, body):
        data = json.loads(body)
        for tool, args, put in list(tool_calls(kind, data)):
            put(self.check(tool, args))
        return json.dumps(data).encode()


@pytest.mark.parametrize("step", [1, 9, 10**6])
def test_the_guard_checks_streamed_tool_calls_after_demasking(stage, step):
    meta, sent = session(stage, body={"model": "m", "messages": [{"role": "user", "content": SAID}],
                                      "tools": [{"type": "function", "function": {"name": "save_contact"}}]})
    raw = b"".join(srv.openai_chat(sent, True))
    agents = Agents()
    out = feed(open_reply(stage, meta, "text/event-stream", None, agents=agents), raw, step)
    [(tool, args)] = agents.calls
    assert tool == "save_contact" and json.loads(args)["name"] == NAME  # the guard sees the de-masked call
    streamed = "".join(tc["function"].get("arguments") or "" for block in out.decode().split("\n\n")
                       if block.startswith("data: {") for c in json.loads(block[6:])["choices"]
                       for tc in (c.get("delta") or {}).get("tool_calls") or [])
    assert json.loads(streamed) == {"checked": "save_contact"} and out.endswith(b"data: [DONE]\n\n")


def test_the_guard_checks_a_whole_answers_tool_calls_after_demasking(stage):
    meta, sent = session(stage, body={"model": "m", "messages": [{"role": "user", "content": SAID}],
                                      "tools": [{"type": "function", "function": {"name": "save_contact"}}]})
    raw = json.dumps(srv.openai_chat(sent, False)).encode()
    agents = Agents()
    out = json.loads(gzip.decompress(open_reply(stage, meta, "application/json", "gzip", agents=agents)
                                     .whole(gzip.compress(raw))))
    assert json.loads(agents.calls[0][1])["name"] == NAME
    assert json.loads(out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {"checked": "save_contact"}
    assert len(open_reply(stage, meta, "application/x-ndjson", None, agents=agents).parts) == 1  # SSE only


# ------------------------------------------------------------------ WebSocket server messages

def test_websocket_messages_of_a_chat_dialect_only(stage):
    meta, _ = session(stage)
    assert open_messages(stage, meta) is None  # openai_chat speaks HTTP
    ws = open_messages(stage, {**meta, "chat_api": "openai_realtime"})
    assert ws is not None and ws.message(b"not json") == [b"not json"]
    assert open_messages(stage, {**meta, "session": None, "chat_api": "openai_realtime"}) is None


# ------------------------------------------------------------------ the chat replies recorded from real APIs

def recorded_replies():
    yaml = pytest.importorskip("yaml")
    from urllib.parse import urlsplit

    out = []
    for f in sorted(CASSETTES.glob("*/*.yaml*")):
        opener = gzip.open if f.name.endswith(".gz") else open
        with opener(f, "rt") as fh:
            cas = yaml.safe_load(fh)
        for k, it in enumerate(cas.get("interactions") or []):
            rq, rs = it.get("request") or {}, it.get("response") or {}
            body, reply = rq.get("body"), (rs.get("body") or {}).get("string")
            body = body.get("string") if isinstance(body, dict) else body
            if not isinstance(body, str | bytes) or not body or not isinstance(reply, str | bytes) or not reply:
                continue
            u = urlsplit(rq.get("uri", ""))
            chat = chatapi.recognise_body(u.hostname or "", u.path, body.encode() if isinstance(body, str) else body,
                                          "application/json")
            if chat is None:
                continue
            headers = {k.lower(): v[0] if isinstance(v, list) else v for k, v in (rs.get("headers") or {}).items()}
            if headers.get("content-encoding"):
                continue  # vcrpy stored it decoded or as bytes of another coding: not the wire
            out.append(pytest.param(chat.kind, headers.get("content-type", ""),
                                    reply.encode() if isinstance(reply, str) else reply, id=f"{f.stem}-{k}"))
    if not out:
        pytest.skip(f"no recorded chat replies under {CASSETTES}")
    return out


class _Store:
    """A session store of one mapping (the recorded replies have no session of ours)."""

    def __init__(self, dm: Demasker):
        self.dm, self.aliases = dm, []

    def demasker(self, sid):
        return self.dm

    def alias(self, a, sid):
        self.aliases.append(a)


class _Session:
    def __init__(self, dm: Demasker):
        self.store = _Store(dm)


def test_recorded_replies_pass_byte_for_byte_when_nothing_is_a_surrogate_and_chunking_never_matters():
    cases = recorded_replies()
    opened = changed = 0
    for case in cases:
        kind, ctype, reply = case.values
        words = sorted(set(re.findall(r"\b[A-Z][a-z]{5,}\b", reply.decode("utf-8", "replace"))))
        meta = {"session": "s", "chat_api": kind, "id": "d"}
        for dm in (Demasker([("Xylophonist Quarrington", "Real Person", True)]),
                   Demasker([(w, "Zebedee", False) for w in words[:3]])):
            f = open_reply(_Session(dm), meta, ctype, None)
            if f is None:
                continue
            opened += 1
            whole = open_reply(_Session(dm), meta, ctype, None).whole(reply)
            assert feed(f, reply, 7) == whole, case.id
            if dm.rx is None or dm.rx.search(reply.decode("utf-8", "replace")) is None:
                assert whole == reply, case.id
            changed += whole != reply
    assert opened >= 2 * len(cases) - 10 and changed >= len(cases) // 4, (len(cases), opened, changed)


def _encode(raw: bytes, coding: str | None) -> bytes:
    from guardian_proxy import codec

    return codec.encode(raw, coding) if coding else raw


def _decode(raw: bytes, coding: str | None) -> bytes:
    from guardian_proxy import codec

    return codec.decode(raw, coding, 1 << 30) if coding else raw
