"""Cohere Chat v2 and v1: requests (slots, turns, documents, tool calls, citations) and replies (SSE and NDJSON
streams cut at every byte boundary, tool plans and tool-call arguments, whole JSON bodies)."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.chatapi.sse import NDJSONFramer
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, demask_body
from tests.support import google_cohere_server as srv

DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
SAID = "I'm Alex Smith (alex.smith@example.net)."

V2 = {
    "model": "command-a-03-2025", "stream": True,
    "messages": [
        {"role": "system", "content": "You help Maria Gonzalez."},
        {"role": "user", "content": [{"type": "text", "text": "I'm Maria Gonzalez, maria.g@gmail.com."},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                                     {"type": "document", "document": {"id": "d1", "data": {"title": "Maria's CV",
                                                                                            "year": 2020}}}]},
        {"role": "assistant", "tool_plan": "I will look Maria up.",
         "tool_calls": [{"id": "tc1", "type": "function",
                         "function": {"name": "lookup", "arguments": "{\"who\": \"Maria Gonzalez\"}"}}]},
        {"role": "tool", "tool_call_id": "tc1", "content": [{"type": "document", "document": {
            "data": {"email": "maria.g@gmail.com"}}}, {"type": "text", "text": "Maria found"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Maria is..."},
                                          {"type": "text", "text": "Maria Gonzalez is found."}],
         "citations": [{"start": 0, "end": 14, "text": "Maria Gonzalez", "sources": [
             {"type": "tool", "id": "tc1:0", "tool_output": {"email": "maria.g@gmail.com"}}]}]},
        {"role": "user", "content": "Thanks, Maria says hi."},
    ],
    "documents": ["Maria Gonzalez lives in Lisbon.", {"id": "x", "data": {"text": "Maria's notes"}}],
    "tools": [{"type": "function", "function": {"name": "lookup", "description": "find someone"}}],
}


def test_v2_request_slots_roles_turns():
    chat = chatapi.recognise_body("api.cohere.com", "/v2/chat", json.dumps(V2).encode(), "application/json")
    assert chat.kind == "cohere_v2" and chat.stream and chat.history and chat.turns == 2
    got = [(s.path, s.role, s.turn, s.json_text) for s in chat.slots]
    assert got == [
        ("json:$.messages[0].content", "system", 0, False),
        ("json:$.messages[1].content[0].text", "user", 1, False),
        ("json:$.messages[1].content[2].document.data.title", "user", 1, False),
        ("json:$.messages[2].tool_calls[0].function.arguments", "assistant", 1, True),
        ("json:$.messages[2].tool_plan", "assistant", 1, False),
        ("json:$.messages[3].content[0].document.data.email", "tool", 1, False),
        ("json:$.messages[3].content[1].text", "tool", 1, False),
        ("json:$.messages[4].citations[0].sources[0].tool_output.email", "tool", 1, False),
        ("json:$.messages[4].citations[0].text", "assistant", 1, False),
        ("json:$.messages[4].content[1].text", "assistant", 1, False),
        ("json:$.messages[5].content", "user", 2, False),
        ("json:$.documents[0]", "tool", 2, False),
        ("json:$.documents[1].data.text", "tool", 2, False),
    ]
    for s in chat.slots:
        chatapi.set_text(chat.data, s.parts, "X")
    out = json.loads(chatapi.dialects.get("cohere_v2").serialise(chat))
    assert out["messages"][4]["content"][0] == {"type": "thinking", "thinking": "Maria is..."}
    assert out["messages"][1]["content"][1] == V2["messages"][1]["content"][1]
    assert out["messages"][1]["content"][2]["document"] == {"id": "d1", "data": {"title": "X", "year": 2020}}


def test_v1_request_history_preamble_tool_results_and_conversation_id():
    body = {"message": "It's Maria again.", "preamble": "Be nice to Maria.", "model": "command-r-plus",
            "chat_history": [{"role": "USER", "message": "I'm Maria Gonzalez."},
                             {"role": "CHATBOT", "message": "Hi Maria!",
                              "tool_calls": [{"name": "lookup", "parameters": {"who": "Maria"}}]},
                             {"role": "TOOL", "tool_results": [{"call": {"name": "lookup", "parameters": {"who": "M"}},
                                                                "outputs": [{"email": "maria.g@gmail.com"}]}]}],
            "documents": [{"title": "Maria's CV", "snippet": "Lisbon"}], "stream": True}
    chat = chatapi.recognise_body("api.cohere.ai", "/v1/chat", json.dumps(body).encode(), "application/json")
    assert chat.kind == "cohere_v1" and chat.stream and chat.history and chat.turns == 2
    assert [(s.path, s.role, s.turn) for s in chat.slots] == [
        ("json:$.preamble", "system", 0), ("json:$.chat_history[0].message", "user", 1),
        ("json:$.chat_history[1].message", "assistant", 1),
        ("json:$.chat_history[1].tool_calls[0].parameters.who", "assistant", 1),
        ("json:$.chat_history[2].tool_results[0].call.parameters.who", "assistant", 1),
        ("json:$.chat_history[2].tool_results[0].outputs[0].email", "tool", 1),
        ("json:$.message", "user", 2), ("json:$.documents[0].title", "tool", 2),
        ("json:$.documents[0].snippet", "tool", 2)]
    single = chatapi.recognise_body("api.cohere.com", "/v1/chat", json.dumps(
        {"message": "I'm Maria.", "conversation_id": "conv-42"}).encode(), None)
    assert not single.history and single.conversation == "conv-42" and single.turns == 1 and not single.stream


@pytest.mark.parametrize("path, body", [
    ("/v2/chat", {"message": "hi"}), ("/v1/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    ("/v2/embed", {"texts": ["hi"]}),
])
def test_not_chat(path, body):
    assert chatapi.recognise_body("api.cohere.com", path, json.dumps(body).encode(), None) is None


# ---------------------------------------------------------------------- replies


def run(sd: StreamDemasker, raw: bytes, cuts) -> bytes:
    out, pos = bytearray(), 0
    for c in [*cuts, len(raw)]:
        out += sd(raw[pos:c])
        pos = c
    return bytes(out + sd(b""))


def sse(raw: bytes) -> list[tuple[str, dict]]:
    out = []
    for block in raw.decode().split("\n\n"):
        lines = block.split("\n")
        name = next((ln[7:] for ln in lines if ln.startswith("event: ")), None)
        data = [ln[6:] for ln in lines if ln.startswith("data: ")]
        if data:
            out.append((name, json.loads("\n".join(data))))
    return out


def v2_sd():
    return StreamDemasker("cohere_v2", DM, chatapi.dialects.get("cohere_v2").framer("text/event-stream"))


def body(tools=False):
    b = {"model": "command-a", "messages": [{"role": "user", "content": SAID}], "stream": True}
    return {**b, "tools": [{"type": "function", "function": {"name": "save_contact"}}]} if tools else b


@pytest.mark.parametrize("tools", [False, True])
def test_v2_stream_cut_at_every_byte_boundary_equals_the_demasked_stream(tools):
    raw = b"".join(srv.cohere_v2(body(tools), True))
    whole = run(v2_sd(), raw, [])
    evs = sse(whole)
    assert all(name == obj["type"] for name, obj in evs)  # every event (synthetic ones too) named as its type
    types = [o["type"] for _, o in evs]
    assert types[0] == "message-start" and types[-1] == "message-end"
    text, args = srv.answer(body(tools))
    if tools:
        plan = "".join(o["delta"]["message"]["tool_plan"] for _, o in evs if o["type"] == "tool-plan-delta")
        assert plan == "I will save the contact of Maria Gonzalez."
        assert types.index("tool-call-start") > max(i for i, t in enumerate(types) if t == "tool-plan-delta")
        arg = "".join(o["delta"]["message"]["tool_calls"]["function"]["arguments"] for _, o in evs
                      if o["type"] in ("tool-call-start", "tool-call-delta"))
        assert json.loads(arg) == {"name": "Maria Gonzalez", "email": "maria.g@gmail.com",
                                   "note": "follow up with Maria Gonzalez"}
        assert types.index("tool-call-end") > max(i for i, t in enumerate(types) if t == "tool-call-delta")
    else:
        got = "".join(o["delta"]["message"]["content"]["text"] for _, o in evs if o["type"] == "content-delta")
        assert got == DM.full(text) and "Alex" not in whole.decode()
        assert types.index("content-end") > max(i for i, t in enumerate(types) if t == "content-delta")
    for cut in range(1, len(raw)):
        assert run(v2_sd(), raw, [cut]) == whole, cut
    for step in (1, 2, 5):
        assert run(v2_sd(), raw, range(step, len(raw), step)) == whole, step


def test_v2_thinking_deltas_and_citations():
    def ev(obj):
        return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()

    raw = (ev({"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "thinking",
                                                                                     "thinking": ""}}}})
           + ev({"type": "content-delta", "index": 0, "delta": {"message": {"content": {"thinking": "Alex Smith"}}}})
           + ev({"type": "content-end", "index": 0})
           + ev({"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "Alex Sm"}}}})
           + ev({"type": "citation-start", "index": 0, "delta": {"message": {"citations": {
               "start": 0, "end": 10, "text": "Alex Smith", "sources": [{"type": "document", "id": "d",
                                                                         "document": {"t": "Alex Smith"}}]}}}})
           + ev({"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "ith."}}}})
           + ev({"type": "content-end", "index": 1}) + ev({"type": "message-end", "delta": {"finish_reason": "COMPLETE"}}))
    evs = [o for _, o in sse(run(v2_sd(), raw, range(4, len(raw), 4)))]
    assert evs[1]["delta"]["message"]["content"]["thinking"] == "Alex Smith"  # reasoning never changed
    cit = next(o for o in evs if o["type"] == "citation-start")["delta"]["message"]["citations"]
    assert cit["text"] == "Maria Gonzalez" and cit["sources"][0]["document"]["t"] == "Maria Gonzalez"
    assert "".join(o["delta"]["message"]["content"].get("text", "") for o in evs if o["type"] == "content-delta"
                   and o["index"] == 1) == "Maria Gonzalez."


def test_v2_whole_json_reply():
    for tools in (False, True):
        out = json.loads(demask_body("cohere_v2", json.dumps(srv.cohere_v2(body(tools), False)).encode(), DM))
        if tools:
            assert out["message"]["tool_plan"] == "I will save the contact of Maria Gonzalez."
            assert json.loads(out["message"]["tool_calls"][0]["function"]["arguments"])["name"] == "Maria Gonzalez"
        else:
            assert out["message"]["content"][0]["text"] == DM.full(srv.answer(body())[0])


def test_v1_ndjson_stream_every_cut_and_whole_reply():
    b = {"message": SAID, "stream": True}
    raw = b"".join(srv.cohere_v1(b, True))
    d = chatapi.dialects.get("cohere_v1")
    assert isinstance(d.framer("application/stream+json"), NDJSONFramer) and d.framer("application/json") is None
    whole = run(StreamDemasker("cohere_v1", DM, d.framer("application/stream+json")), raw, [])
    lines = [json.loads(x) for x in whole.splitlines()]
    exp = DM.full(srv.answer(b)[0])
    assert "".join(x.get("text", "") for x in lines if x["event_type"] == "text-generation") == exp
    assert lines[-1]["event_type"] == "stream-end" and lines[-1]["response"]["text"] == exp
    assert lines[-1]["response"]["chat_history"][0]["message"] == "I'm Maria Gonzalez (maria.g@gmail.com)."
    for cut in range(1, len(raw), 3):
        assert run(StreamDemasker("cohere_v1", DM, d.framer("application/stream+json")), raw, [cut]) == whole
    out = json.loads(demask_body("cohere_v1", json.dumps(srv.cohere_v1(b, False)).encode(), DM))
    assert out["text"] == exp


def test_synth_events():
    d = chatapi.dialects.get("cohere_v2")
    assert d.synth(None, ("k", "content", 1), "x") == (
        "content-delta", {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "x"}}}})
    assert d.synth(None, ("k", "tool", 0), "x", True)[1]["delta"]["message"]["tool_calls"]["function"] == {
        "arguments": "x"}
    assert d.closes("message-end", {"type": "message-end"}) == [()]
    assert d.closes(None, {"type": "tool-call-start", "index": 0}) == [("k", "plan")]
