"""Gemini API, Vertex AI Gemini and Vertex's Anthropic models: requests (slots, turns, stream, paths) and
replies (SSE chunks cut at every byte, function calls, thoughts, whole JSON bodies)."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.chatapi.dialects.gemini import GeminiSSEFramer
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, demask_body
from tests.support import google_cohere_server as srv
from tests.support import llm_server

DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
SAID = "I'm Alex Smith (alex.smith@example.net)."
GEMINI = ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
VERTEX = ("us-central1-aiplatform.googleapis.com",
          "/v1beta1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent")

BODY = {
    "systemInstruction": {"role": "user", "parts": [{"text": "You help Maria Gonzalez plan trips."}]},
    "contents": [
        {"role": "user", "parts": [{"text": "I'm Maria Gonzalez (maria.g@gmail.com)."},
                                   {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
        {"role": "model", "parts": [{"text": "thinking about Maria", "thought": True, "thoughtSignature": "c2lnbmVk"},
                                    {"functionCall": {"id": "fc1", "name": "lookup",
                                                      "args": {"who": "Maria Gonzalez", "tags": ["vip", 3]}},
                                     "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "fc1", "name": "lookup",
                                                         "response": {"output": {"email": "maria.g@gmail.com"}}}}]},
        {"role": "model", "parts": [{"text": "Found Maria."},
                                    {"executableCode": {"language": "PYTHON", "code": "print('Maria')"}},
                                    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "Maria"}}]},
        {"parts": [{"text": "Thanks! Book it for Maria Gonzalez."},
                   {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/f.pdf"}}]},
    ],
    "generationConfig": {"temperature": 0.2, "thinkingConfig": {"includeThoughts": True}},
    "tools": [{"functionDeclarations": [{"name": "lookup", "description": "find a person"}]}],
}


def slots(chat):
    return [(s.path, s.role, s.turn, s.json_text) for s in chat.slots]


def test_gemini_request_slots_roles_and_turns():
    chat = chatapi.recognise_body(*GEMINI, json.dumps(BODY).encode(), "application/json")
    assert chat.kind == "gemini" and chat.stream and chat.history and chat.turns == 2 and chat.conversation is None
    assert slots(chat) == [
        ("json:$.systemInstruction.parts[0].text", "system", 0, False),
        ("json:$.contents[0].parts[0].text", "user", 1, False),
        ("json:$.contents[1].parts[1].functionCall.args.who", "assistant", 1, False),
        ("json:$.contents[1].parts[1].functionCall.args.tags[0]", "assistant", 1, False),
        ("json:$.contents[2].parts[0].functionResponse.response.output.email", "tool", 1, False),
        ("json:$.contents[3].parts[0].text", "assistant", 1, False),
        ("json:$.contents[3].parts[1].executableCode.code", "assistant", 1, False),
        ("json:$.contents[3].parts[2].codeExecutionResult.output", "tool", 1, False),
        ("json:$.contents[4].parts[0].text", "user", 2, False),
    ]
    for s in chat.slots:  # the paths are where set_text writes
        chatapi.set_text(chat.data, s.parts, "X")
    out = json.loads(chatapi.dialects.get("gemini").serialise(chat))
    assert out["contents"][1]["parts"][0] == BODY["contents"][1]["parts"][0]  # the thought and its signature
    assert out["contents"][1]["parts"][1]["thoughtSignature"] == "c2ln"
    assert out["contents"][1]["parts"][1]["functionCall"] == {"id": "fc1", "name": "lookup",
                                                             "args": {"who": "X", "tags": ["X", 3]}}
    assert out["contents"][0]["parts"][1] == BODY["contents"][0]["parts"][1]


def test_snake_case_proto_json_vertex_path_and_cached_content():
    body = {"system_instruction": {"parts": [{"text": "Be brief."}]}, "cached_content": "cachedContents/abc123",
            "contents": [{"role": "user", "parts": [{"text": "Hi, I'm Maria."}]},
                         {"role": "model", "parts": [{"function_call": {"name": "f", "args": {"q": "Maria"}}}]},
                         {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"r": "ok"}}}]}]}
    chat = chatapi.recognise_body(*VERTEX, json.dumps(body).encode(), "application/json")
    assert chat.kind == "vertex_gemini" and not chat.stream and chat.turns == 1
    assert chat.conversation == "cachedContents/abc123"
    assert [s.path for s in chat.slots] == ["json:$.system_instruction.parts[0].text", "json:$.contents[0].parts[0].text",
                                            "json:$.contents[1].parts[0].function_call.args.q",
                                            "json:$.contents[2].parts[0].function_response.response.r"]


@pytest.mark.parametrize("host, path, kind", [
    ("generativelanguage.googleapis.com", "/v1/models/gemini-1.5-pro:generateContent", "gemini"),
    ("generativelanguage.googleapis.com", "/v1beta/tunedModels/my-model:streamGenerateContent", "gemini"),
    ("aiplatform.googleapis.com", "/v1/projects/p/locations/global/publishers/google/models/gemini-2.0-flash"
                                  ":streamGenerateContent?alt=sse", "vertex_gemini"),
    ("aiplatform.googleapis.com", "/v1beta1/publishers/google/models/gemini-2.0-flash:generateContent",
     "vertex_gemini"),
    ("europe-west4-aiplatform.googleapis.com", "/v1/projects/p/locations/europe-west4/endpoints/123:generateContent",
     "vertex_gemini"),
    ("us-east5-aiplatform.googleapis.com", "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
                                           "claude-sonnet-4@20250514:streamRawPredict", "vertex_anthropic"),
])
def test_paths(host, path, kind):
    assert chatapi.kind_of(path.split("?")[0], host) == kind


@pytest.mark.parametrize("path, body", [
    ("/v1beta/models/gemini-2.5-flash:countTokens", {"contents": [{"parts": [{"text": "hi"}]}]}),
    ("/v1beta/models/gemini-2.5-flash:embedContent", {"content": {"parts": [{"text": "hi"}]}}),
    ("/v1beta/models/gemini-2.5-flash:generateContent", {"prompt": {"text": "hi"}}),
    ("/v1beta/cachedContents", {"contents": [{"parts": [{"text": "hi"}]}]}),
])
def test_not_chat(path, body):
    assert chatapi.recognise_body("generativelanguage.googleapis.com", path, json.dumps(body).encode(), None) is None


def test_vertex_anthropic_raw_predict():
    body = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 100, "system": "Help Maria.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "I'm Maria Gonzalez."}]},
                         {"role": "assistant", "content": [{"type": "thinking", "thinking": "Maria", "signature": "s"},
                                                           {"type": "tool_use", "id": "t1", "name": "f",
                                                            "input": {"who": "Maria"}}]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}
    path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet-v2@20241022"
    chat = chatapi.recognise_body("us-east5-aiplatform.googleapis.com", path + ":streamRawPredict",
                                  json.dumps(body).encode(), "application/json")
    assert chat.kind == "vertex_anthropic" and chat.stream and chat.turns == 1
    assert [s.path for s in chat.slots] == ["json:$.system", "json:$.messages[0].content[0].text",
                                            "json:$.messages[1].content[1].input.who",
                                            "json:$.messages[2].content[0].content"]
    assert not chatapi.recognise_body("x", path + ":rawPredict", json.dumps(body).encode(), None).stream


# ---------------------------------------------------------------------- replies


def run(sd: StreamDemasker, raw: bytes, cuts) -> bytes:
    out, pos = bytearray(), 0
    for c in [*cuts, len(raw)]:
        out += sd(raw[pos:c])
        pos = c
    return bytes(out + sd(b""))


def chunks(raw: bytes) -> list[dict]:
    blocks = raw.decode().replace("\r\n", "\n").split("\n\n")
    return [json.loads(ln[6:]) for b in blocks for ln in b.split("\n") if ln.startswith("data: ")]


def gemini_sd(kind="gemini"):
    return StreamDemasker(kind, DM, chatapi.dialects.get(kind).framer("text/event-stream"))


def text_of(objs) -> str:
    return "".join(p.get("text", "") for o in objs for c in o["candidates"] for p in c["content"]["parts"]
                   if not p.get("thought"))


def stream_body(tools=False):
    body = {"contents": [{"role": "user", "parts": [{"text": SAID}]}]}
    return {**body, "tools": [{"functionDeclarations": [{"name": "save_contact"}]}]} if tools else body


@pytest.mark.parametrize("tools", [False, True])
def test_stream_cut_at_every_byte_boundary_equals_the_demasked_stream(tools):
    raw = b"".join(srv.gemini(stream_body(tools), True))
    whole = run(gemini_sd(), raw, [])
    text, args = srv.answer(stream_body(tools))
    objs = chunks(whole)
    if tools:
        assert text_of(objs) == DM.full(f"I will save {args['name']}.") == "I will save Maria Gonzalez."
        calls = [p["functionCall"] for o in objs for p in o["candidates"][0]["content"]["parts"] if "functionCall" in p]
        assert calls == [{"name": "save_contact", "args": {"name": "Maria Gonzalez", "email": "maria.g@gmail.com",
                                                           "note": "follow up with Maria Gonzalez"}}]
    else:
        assert text_of(objs) == DM.full(text)
        assert "Maria Gonzalez's details; MARIA GONZALEZ" in text_of(objs) and "Alex" not in whole.decode()
    fin = [o for o in objs if o["candidates"][0].get("finishReason")]
    assert fin == [objs[-1]]  # the finish comes last: held text is released in it, before it or with it
    assert objs[-1]["usageMetadata"]["totalTokenCount"] == 42 and all(o["modelVersion"] == srv.MODEL for o in objs)
    for cut in range(1, len(raw)):  # one cut at every byte
        assert run(gemini_sd(), raw, [cut]) == whole, cut
    for step in (1, 2, 3, 7):  # and cut everywhere at once
        assert run(gemini_sd(), raw, range(step, len(raw), step)) == whole, step


def test_chunks_that_change_nothing_pass_byte_for_byte():
    body = {"contents": [{"role": "user", "parts": [{"text": "Hello there."}]}]}
    raw = b"".join(srv.gemini(body, True))
    sd = StreamDemasker("gemini", Demasker([("Qa Zed", "Real Name", True)]), GeminiSSEFramer())
    out = run(sd, raw, range(5, len(raw), 5))
    events = raw.split(b"\r\n\r\n")
    assert out.startswith(b"\r\n\r\n".join(events[:-2]) + b"\r\n\r\n")  # all but the finishing chunk as sent
    assert text_of(chunks(out)) == srv.answer(body)[0]


def test_thoughts_are_never_demasked_and_other_candidates_are_their_own_channel():
    def ev(cands):
        return b"data: " + json.dumps({"candidates": cands, "modelVersion": "m"}).encode() + b"\n\n"

    raw = (ev([{"content": {"role": "model", "parts": [{"text": "Alex Smith asks", "thought": True}]}, "index": 0}])
           + ev([{"content": {"role": "model", "parts": [{"text": "Thought: Alex", "thought": True},
                                                         {"text": "Dear Alex Sm"}]}, "index": 0},
                 {"content": {"role": "model", "parts": [{"text": "Hi Alex"}]}, "index": 1}])
           + ev([{"content": {"role": "model", "parts": [{"text": "ith, done."}]}, "index": 0},
                 {"content": {"role": "model", "parts": [{"text": " Smith!"}]}, "index": 1, "finishReason": "STOP"}])
           + ev([{"content": {"role": "model", "parts": [{"text": "", "thoughtSignature": "c2ln"}]}, "index": 0,
                  "finishReason": "STOP", "citationMetadata": {"citations": [{"title": "Alex Smith's page"}]}}]))
    objs = chunks(run(gemini_sd("vertex_gemini"), raw, range(3, len(raw), 3)))
    thoughts = [p["text"] for o in objs for c in o["candidates"] for p in c["content"]["parts"] if p.get("thought")]
    assert thoughts == ["Alex Smith asks", "Thought: Alex"]
    by = {0: "", 1: ""}
    for o in objs:
        for c in o["candidates"]:
            by[c["index"]] += "".join(p.get("text", "") for p in c["content"]["parts"] if not p.get("thought"))
    assert by == {0: "Dear Maria Gonzalez, done.", 1: "Hi Maria Gonzalez!"}
    assert objs[-1]["candidates"][0]["citationMetadata"]["citations"][0]["title"] == "Maria Gonzalez's page"
    assert objs[-1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] == "c2ln"


def test_closes_and_synth():
    d = chatapi.dialects.get("gemini")
    fin = {"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP", "index": 2}]}
    assert ("g", 2) in d.closes(None, fin)
    name, obj = d.synth({"modelVersion": "m", "responseId": "r", "usageMetadata": {}}, ("g", 2), "held")
    assert name is None and obj == {"candidates": [{"content": {"role": "model", "parts": [{"text": "held"}]},
                                                    "index": 2}], "modelVersion": "m", "responseId": "r"}


def test_whole_json_reply_text():
    out = demask_body("gemini", json.dumps(srv.gemini(stream_body(), False)).encode(), DM)
    assert json.loads(out)["candidates"][0]["content"]["parts"][0]["text"] == DM.full(srv.answer(stream_body())[0])


def test_whole_json_reply_function_call_args():
    out = demask_body("gemini", json.dumps(srv.gemini(stream_body(True), False)).encode(), DM)
    args = json.loads(out)["candidates"][0]["content"]["parts"][1]["functionCall"]["args"]
    assert args == {"name": "Maria Gonzalez", "email": "maria.g@gmail.com", "note": "follow up with Maria Gonzalez"}


def test_json_array_stream_without_alt_sse_is_demasked_whole():
    """Without alt=sse the stream is one JSON array (application/json): its items are de-masked as the stream's
    events, so a surrogate split across two of them is found."""
    body = stream_body()
    arr = json.dumps([json.loads(c.decode()[6:]) for c in srv.gemini(body, True)]).encode()
    assert chatapi.dialects.get("gemini").framer("application/json") is None
    assert text_of(json.loads(demask_body("gemini", arr, DM))) == DM.full(srv.answer(body)[0])


@pytest.mark.parametrize("step", [1, 4, 10**6])
def test_vertex_anthropic_stream(step):
    body = {"anthropic_version": "vertex-2023-10-16", "messages": [{"role": "user", "content": SAID}], "stream": True}
    raw = b"".join(llm_server.anthropic_messages(body, True))
    sd = StreamDemasker("vertex_anthropic", DM, chatapi.dialects.get("vertex_anthropic").framer("text/event-stream"))
    out = run(sd, raw, range(step, len(raw), step))
    text = "".join(o["delta"]["text"] for o in chunks(out) if o.get("type") == "content_block_delta")
    assert text == DM.full(llm_server.answer(body)[0])
