"""Text-completion APIs (docs/services.md): Together's (OpenAI-compatible) legacy Completions, streamed as
`choices[].text`, and Anthropic's legacy `/v1/complete`, streamed as `completion` events, have dialects of
their own, so a surrogate split across two chunks is restored whole (the generic dialect de-masks event by
event and left half a surrogate: "Michelle Doorwright")."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, demask_body
from tests.support import llm_server as srv

DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
SAID = "I'm Alex Smith (alex.smith@example.net)."
REAL_SAID = "I'm Maria Gonzalez (maria.g@gmail.com)."
CLAUDE_PROMPT = f"You are kind.\n\nHuman: {SAID}\n\nAssistant:"


def run(sd: StreamDemasker, raw: bytes, step: int) -> bytes:
    return b"".join(sd(raw[i:i + step]) for i in range(0, len(raw), step)) + sd(b"")


def sse(raw: bytes) -> list:
    out = []
    for block in raw.decode().split("\n\n"):
        data = [ln[5:].strip() for ln in block.splitlines() if ln.startswith("data:")]
        if data:
            out.append("[DONE]" if data[0] == "[DONE]" else json.loads("\n".join(data)))
    return out


def recognise(host, path, body):
    return chatapi.recognise_body(host, path, json.dumps(body).encode(), "application/json")


def test_text_completions_requests_are_recognised():
    chat = recognise("api.together.xyz", "/v1/completions", {"model": "m", "prompt": SAID, "stream": True})
    assert chat.kind == "openai_completions" and chat.stream and [s.text for s in chat.slots] == [SAID]
    chat = recognise("api.openai.com", "/v1/completions", {"model": "m", "prompt": ["a b", SAID], "suffix": "end"})
    assert [s.parts for s in chat.slots] == [("prompt", 0), ("prompt", 1), ("suffix",)]
    assert recognise("api.together.xyz", "/v1/completions", {"model": "m", "prompt": [1, 2, 3]}) is None  # token ids
    assert recognise("api.together.xyz", "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]}
                     ).kind == "openai_chat"


def test_anthropic_complete_request_is_cut_into_turns():
    body = {"model": "claude-2.1", "prompt": CLAUDE_PROMPT, "max_tokens_to_sample": 50}
    chat = recognise("api.anthropic.com", "/v1/complete", body)
    assert chat.kind == "anthropic_complete"
    assert [(s.role, s.text) for s in chat.slots] == [("system", "You are kind."), ("user", SAID)]
    # the markers are never analysed, and an unchanged body is written back as it came
    assert json.loads(chatapi.dialects.get("anthropic_complete").serialise(chat)) == body


@pytest.mark.parametrize("step", [1, 2, 3, 5, 8, 10**6])
def test_text_completions_stream_restores_a_split_surrogate(step):
    raw = b"".join(srv.text_completions({"prompt": SAID}, True))
    out = run(StreamDemasker("openai_completions", DM), raw, step)
    objs = sse(out)
    text = "".join(c["text"] for o in objs if o != "[DONE]" for c in o["choices"])
    assert text == DM.full(srv.answer({"prompt": SAID})[0])
    assert "Maria Gonzalez's details; MARIA GONZALEZ" in text and text.endswith(REAL_SAID) and "Alex" not in text
    assert objs[-1] == "[DONE]" and objs[-2]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("step", [1, 2, 3, 5, 8, 10**6])
def test_anthropic_complete_stream_restores_a_split_surrogate(step):
    raw = b"".join(srv.anthropic_complete({"prompt": CLAUDE_PROMPT}, True))
    out = run(StreamDemasker("anthropic_complete", DM), raw, step)
    objs = sse(out)
    text = "".join(o["completion"] for o in objs if o.get("type") == "completion")
    assert text == DM.full(srv.answer({"prompt": SAID})[0])
    assert "Maria Gonzalez's details; MARIA GONZALEZ" in text and text.endswith(REAL_SAID) and "Smith" not in text
    assert objs[-1]["stop_reason"] == "stop_sequence" and b"event: completion\n" in out


def test_the_generic_dialect_left_half_a_surrogate():
    """Why the dialects: event by event, a surrogate cut across two chunks is not found."""
    raw = b"".join(srv.text_completions({"prompt": SAID}, True))
    from guardian_proxy.chatapi.sse import SSEFramer

    out = run(StreamDemasker("ai_generic", DM, SSEFramer()), raw, 10**6)
    text = "".join(c["text"] for o in sse(out) if o != "[DONE]" for c in o["choices"])
    assert "Maria Gonzalez" not in text


def test_whole_json_replies():
    body = json.dumps(srv.text_completions({"prompt": SAID}, False)).encode()
    assert "Maria Gonzalez's details" in json.loads(demask_body("openai_completions", body, DM))["choices"][0]["text"]
    body = json.dumps(srv.anthropic_complete({"prompt": CLAUDE_PROMPT}, False)).encode()
    assert json.loads(demask_body("anthropic_complete", body, DM))["completion"].endswith(REAL_SAID)


def together_chat_stream(text: str) -> bytes:
    """Together's chat stream: every piece as `delta.content` and again as `choices[].text`."""
    base = {"id": "8f-test", "object": "chat.completion.chunk", "created": 1, "model": "meta-llama/Llama-3-8b-chat-hf"}
    out = []
    for p in srv.pieces(text):
        out.append(srv._sse(None, {**base, "choices": [{"index": 0, "text": p, "logprobs": None, "finish_reason": None,
                                                        "seed": None, "delta": {"token_id": 1, "role": "assistant",
                                                                                "content": p, "tool_calls": None}}]}))
    out.append(srv._sse(None, {**base, "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "stop",
                                                    "seed": 7, "delta": {"token_id": 2, "role": "assistant",
                                                                         "content": ""}}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}))
    return b"".join(out) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("step", [1, 2, 3, 5, 8, 10**6])
def test_together_chat_stream_text_copy_is_demasked_too(step):
    """Together's streamed `choices[].text` copy kept the surrogates (only `delta.content` was read)."""
    said = srv.answer({"prompt": SAID})[0]
    out = run(StreamDemasker("openai_chat", DM), together_chat_stream(said), step)
    chunks = [o for o in sse(out) if o != "[DONE]"]
    content = "".join(c["delta"].get("content") or "" for o in chunks for c in o["choices"])
    copy = "".join(c.get("text") or "" for o in chunks for c in o["choices"])
    assert content == copy == DM.full(said) and "Maria Gonzalez's details; MARIA GONZALEZ" in copy
    assert all(c.get("text", "") == (c["delta"].get("content") or "") for o in chunks for c in o["choices"])
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
