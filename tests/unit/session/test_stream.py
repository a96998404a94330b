"""Stream de-masking on the exact event streams of each API (from tests/support/llm_server.py), cut
into chunks of every size, compressed, interrupted and malformed."""

import gzip
import json
import zlib

import pytest

from guardian_proxy.chatapi.sse import MAX_EVENT_BYTES, NDJSONFramer
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, demask_body
from tests.support import llm_server as srv

DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
BODY = {"model": "m", "messages": [{"role": "user", "content": "I'm Alex Smith (alex.smith@example.net)."}]}
REAL_SAID = "I'm Maria Gonzalez (maria.g@gmail.com)."


def run(sd: StreamDemasker, raw: bytes, step: int) -> bytes:
    out = b"".join(sd(raw[i:i + step]) for i in range(0, len(raw), step))
    return out + sd(b"")


def sse_objs(raw: bytes) -> list:
    out = []
    for block in raw.decode().split("\n\n"):
        data = [ln[5:].strip() for ln in block.splitlines() if ln.startswith("data:")]
        if data:
            out.append("[DONE]" if data[0] == "[DONE]" else json.loads("\n".join(data)))
    return out


def expected_text(kind_fn, body) -> str:
    text, _ = srv.answer(body)
    return DM.full(text)


STEPS = [1, 2, 3, 5, 8, 13, 64, 10**6]


@pytest.mark.parametrize("step", STEPS)
def test_openai_chat_stream(step):
    raw = b"".join(srv.openai_chat(BODY, True))
    out = run(StreamDemasker("openai_chat", DM), raw, step)
    objs = sse_objs(out)
    text = "".join(c["delta"].get("content") or "" for o in objs if o != "[DONE]" for c in o["choices"])
    assert text == expected_text(srv.openai_chat, BODY)
    assert "Maria Gonzalez's details; MARIA GONZALEZ" in text and REAL_SAID in text and "Alex" not in text
    assert out.startswith(b": keep-alive\n\n") and out.endswith(b"data: [DONE]\n\n") and objs[-1] == "[DONE]"


@pytest.mark.parametrize("step", [1, 4, 9, 10**6])
def test_openai_tool_call_arguments_stream(step):
    body = {**BODY, "tools": [{"type": "function", "function": {"name": "save_contact"}}]}
    raw = b"".join(srv.openai_chat(body, True))
    objs = sse_objs(run(StreamDemasker("openai_chat", DM), raw, step))
    args = "".join(tc["function"].get("arguments") or "" for o in objs if o != "[DONE]" for c in o["choices"]
                   for tc in c["delta"].get("tool_calls") or [])
    assert json.loads(args) == {"name": "Maria Gonzalez", "email": "maria.g@gmail.com",
                                "note": "follow up with Maria Gonzalez"}


@pytest.mark.parametrize("step", [1, 3, 7, 10**6])
def test_anthropic_stream(step):
    raw = b"".join(srv.anthropic_messages(BODY, True))
    out = run(StreamDemasker("anthropic", DM), raw, step)
    blocks = out.decode().split("\n\n")
    names = [b.split("\n")[0][7:] for b in blocks if b.startswith("event: ")]
    assert names[:3] == ["message_start", "content_block_start", "ping"] and names[-1] == "message_stop"
    assert names.index("content_block_stop") > max(i for i, n in enumerate(names) if n == "content_block_delta")
    text = "".join(o["delta"]["text"] for o in sse_objs(out) if o.get("type") == "content_block_delta")
    assert text == expected_text(srv.anthropic_messages, BODY)


@pytest.mark.parametrize("step", [1, 6, 10**6])
def test_responses_stream_and_alias(step):
    aliases = []
    raw = b"".join(srv.openai_responses(BODY, True))
    objs = sse_objs(run(StreamDemasker("openai_responses", DM, on_alias=aliases.append), raw, step))
    deltas = "".join(o["delta"] for o in objs if o["type"] == "response.output_text.delta")
    done = next(o for o in objs if o["type"] == "response.output_text.done")
    final = next(o for o in objs if o["type"] == "response.completed")
    exp = expected_text(srv.openai_responses, BODY)
    assert deltas == exp == done["text"] == final["response"]["output"][0]["content"][0]["text"]
    assert aliases and aliases[0].startswith("resp_")


@pytest.mark.parametrize("generate", [False, True])
def test_ollama_ndjson_stream(generate):
    body = {"model": "m", "prompt": BODY["messages"][0]["content"]} if generate else BODY
    raw = b"".join(srv.ollama(body, True, generate))
    out = run(StreamDemasker("ollama_generate" if generate else "ollama_chat", DM, NDJSONFramer()), raw, 5)
    lines = [json.loads(x) for x in out.splitlines()]
    text = "".join(x["response"] if generate else x["message"]["content"] for x in lines)
    assert text == expected_text(srv.ollama, body) and lines[-1]["done"] is True


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_compressed_stream_leaves_uncompressed(coding):
    import brotli
    import zstandard

    raw = b"".join(srv.openai_chat(BODY, True))
    comp = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress,
            "zstd": zstandard.ZstdCompressor().compress}[coding](raw)
    sd = StreamDemasker("openai_chat", DM, coding=coding)
    assert sd.decodes
    objs = sse_objs(run(sd, comp, 7))
    text = "".join(c["delta"].get("content") or "" for o in objs if o != "[DONE]" for c in o["choices"])
    assert text == expected_text(srv.openai_chat, BODY)


def test_interrupted_stream_flushes_held_text_then_the_partial_event():
    events = srv.openai_chat(BODY, True)
    texts = [json.loads(e[6:])["choices"][0]["delta"].get("content", "") for e in events[2:-2]]
    k = next(i for i in range(len(texts)) if DM.channel().feed("".join(texts[:i + 1])) != DM.full("".join(
        texts[:i + 1])))  # an event after which a surrogate is incomplete: text is being held back
    cut = len(b"".join(events[:k + 3])) + 10  # ... and the stream breaks inside the next event
    raw = b"".join(events)
    sd = StreamDemasker("openai_chat", DM)
    out = sd(raw[:cut]) + sd(b"")
    partial = raw[len(b"".join(events[:k + 3])):cut]
    assert out.endswith(partial)  # the partial event passes as received, after the flushed text
    objs = sse_objs(out[:-len(partial)])
    text = "".join(c["delta"].get("content") or "" for o in objs for c in o["choices"])
    assert text == DM.full("".join(texts[:k + 1]))  # nothing held back is lost


def test_corrupt_compressed_stream_stops_cleanly():
    sd = StreamDemasker("openai_chat", DM, coding="gzip")
    good = gzip.compress(b"data: {\"choices\": []}\n\n")
    assert sd(good[:20]) == b""
    assert sd(b"not gzip at all") == b""  # decoding failed: nothing corrupt is emitted
    assert sd(b"more") == b"" and sd(b"") == b""


def test_unparseable_and_oversized_events_pass_through():
    sd = StreamDemasker("openai_chat", DM)
    weird = b"data: not json Alex Smith\n\n: comment Alex Smith\n\n"
    assert sd(weird) == weird  # only JSON events are rewritten
    big = b"data: " + b"Alex Smith " * (MAX_EVENT_BYTES // 10)
    out = sd(big)
    assert out == big and sd(b"tail Alex Smith\n\n") == b"tail Alex Smith\n\n"  # then pass-through


def test_whole_json_bodies():
    body = json.dumps(srv.openai_chat({**BODY, "tools": [{}]}, False)).encode()
    out = json.loads(demask_body("openai_chat", body, DM))
    args = json.loads(out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert args["name"] == "Maria Gonzalez" and out["id"] == "chatcmpl-test"
    thinking = {"content": [{"type": "thinking", "thinking": "Alex Smith", "signature": "sig"},
                            {"type": "text", "text": "Alex Smith"}]}
    out = json.loads(demask_body("anthropic", json.dumps(thinking).encode(), DM))
    assert out["content"][0]["thinking"] == "Alex Smith" and out["content"][1]["text"] == "Maria Gonzalez"
    assert demask_body("anthropic", b"{broken", DM) is None
    assert demask_body("anthropic", b'{"text": "nobody"}', DM) is None


def test_an_internal_error_passes_the_rest_unchanged_without_loss(monkeypatch):
    raw = b"".join(srv.openai_chat(BODY, True))
    sd = StreamDemasker("openai_chat", DM)
    half = len(raw) // 2
    first = sd(raw[:half])
    monkeypatch.setattr(sd, "_event", lambda ev: 1 / 0)
    rest = sd(raw[half:]) + sd(b"")
    assert sd.passthrough
    objs = sse_objs(first + rest)  # still a well-formed stream: held text flushed, then the raw remainder
    assert objs[-1] == "[DONE]" and len([o for o in objs if o != "[DONE]"]) >= len(srv.openai_chat(BODY, True)) - 2


def test_a_websocket_message_that_packs_several_events_is_de_masked_event_by_event():
    from guardian_proxy.chatapi.sse import MessageFramer

    sd = StreamDemasker("copilot", DM, MessageFramer())
    msg = (json.dumps({"event": "appendText", "messageId": "m", "partId": "0", "text": "Hi Alex Sm"}) + "\x1e"
           + json.dumps({"event": "appendText", "messageId": "m", "partId": "0", "text": "ith!"}) + "\x1e")
    out = sd.message(msg.encode())
    assert len(out) == 1 and out[0].endswith(b"\x1e")
    texts = [json.loads(x)["text"] for x in out[0].decode().split("\x1e") if x]
    assert "".join(texts) == "Hi Maria Gonzalez!"
