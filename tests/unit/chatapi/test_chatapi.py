"""Chat-API shapes: recognition by path + body, the texts of every API, and streamed-event shapes."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.bodies import json_path


def paths(req):
    return {s.path: s.text for s in req.slots}


def test_openai_chat_messages_parts_tool_calls_and_results():
    body = {"model": "gpt-4o", "stream": True, "messages": [
        {"role": "system", "content": "You help Ann."},
        {"role": "user", "content": [{"type": "text", "text": "I am Ann Lee"},
                                     {"type": "image_url", "image_url": {"url": "data:..."}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"who": "Ann Lee"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Ann Lee lives in Oslo"},
        {"role": "user", "content": "thanks"}]}
    req = chatapi.recognise("/v1/chat/completions", body)
    assert req.kind == "openai_chat" and req.stream and req.turns == 2 and req.history
    p = paths(req)
    assert p == {"json:$.messages[0].content": "You help Ann.", "json:$.messages[1].content[0].text": "I am Ann Lee",
                 "json:$.messages[2].tool_calls[0].function.arguments": '{"who": "Ann Lee"}',
                 "json:$.messages[3].content": "Ann Lee lives in Oslo", "json:$.messages[4].content": "thanks"}
    args = next(s for s in req.slots if s.path.endswith("arguments"))
    assert args.json_text and args.role == "assistant" and args.turn == 1
    assert [s.turn for s in req.slots] == [0, 1, 1, 1, 2]
    assert req.prefix() == "You help Ann.\x1eI am Ann Lee"


def test_paths_are_the_body_walkers_paths_and_set_text_writes_back():
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}
    req = chatapi.recognise("/openai/deployments/d/chat/completions", body)
    s = req.slots[0]
    assert s.path == "json:" + json_path(("messages", 0, "content", 0, "text"))
    chatapi.set_text(body, s.parts, "y")
    assert body["messages"][0]["content"][0]["text"] == "y"


def test_responses_input_instructions_function_calls_and_server_state():
    body = {"model": "o", "instructions": "Be brief", "previous_response_id": "resp_1", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "I'm Bo Diaz"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"a": "Bo Diaz"}'},
        {"type": "function_call_output", "call_id": "c", "output": "found Bo Diaz"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Bo"}], "encrypted_content": "x"}]}
    req = chatapi.recognise("/v1/responses", body)
    assert req.kind == "openai_responses" and not req.history and req.previous == "resp_1"
    assert set(paths(req)) == {"json:$.instructions", "json:$.input[0].content[0].text", "json:$.input[1].arguments",
                               "json:$.input[2].output"}
    assert chatapi.recognise("/v1/responses", {"input": "hello"}).slots[0].path == "json:$.input"
    conv = chatapi.recognise("/v1/responses", {"input": "hi", "conversation": {"id": "conv_9"}})
    assert conv.conversation == "conv_9" and not conv.history


def test_anthropic_system_blocks_tool_use_and_tool_results():
    body = {"model": "claude", "max_tokens": 10, "system": [{"type": "text", "text": "sys"}], "messages": [
        {"role": "user", "content": "I'm Cy Park"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Cy", "signature": "s"},
                                          {"type": "tool_use", "id": "t", "name": "f", "input": {"who": "Cy Park"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                      "content": [{"type": "text", "text": "Cy Park, 40"}]}]}]}
    req = chatapi.recognise("/v1/messages", body)
    assert req.kind == "anthropic" and req.turns == 1 and not req.stream
    assert paths(req) == {"json:$.system[0].text": "sys", "json:$.messages[0].content": "I'm Cy Park",
                          "json:$.messages[1].content[1].input.who": "Cy Park",
                          "json:$.messages[2].content[0].content[0].text": "Cy Park, 40"}


def test_ollama_chat_and_generate():
    chat = chatapi.recognise("/api/chat", {"model": "llama3", "messages": [{"role": "user", "content": "hi Di"}]})
    assert chat.kind == "ollama_chat" and chat.stream  # Ollama streams unless stream: false
    gen = chatapi.recognise("/api/generate", {"model": "m", "prompt": "p", "system": "s", "stream": False,
                                              "context": [1, 2]})
    assert gen.kind == "ollama_generate" and not gen.stream and not gen.history
    assert gen.previous == chatapi.context_hash([1, 2]) and set(paths(gen)) == {"json:$.system", "json:$.prompt"}


@pytest.mark.parametrize("path,body", [
    ("/v1/chat/completions", {"prompt": "x"}),  # wrong shape
    ("/v1/chat/completions", ["not", "an", "object"]),
    ("/v1/embeddings", {"messages": []}),  # wrong path
    ("/api/generate", {"prompt": 3}),
    ("/v1/responses", {"input": 5}),
])
def test_not_chat(path, body):
    assert chatapi.recognise(path, body) is None


def test_unknown_part_type_with_text_is_analysed():
    req = chatapi.recognise("/v2/chat/completions", {"messages": [
        {"role": "user", "content": [{"type": "new_kind", "text": "Eve Ng"}, {"type": "input_audio", "data": "x"}]}]})
    assert paths(req) == {"json:$.messages[0].content[0].text": "Eve Ng"}


# --------------------------------------------------------------------------- events


def test_openai_chat_event_deltas_closes_and_synth():
    ev = {"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"content": "Al", "tool_calls": [
        {"index": 1, "function": {"arguments": '{"a'}}]}, "finish_reason": None}]}
    ds = chatapi.event_deltas("openai_chat", None, ev)
    assert [(d.channel, d.key, d.json_text) for d in ds] == [(("c", 0, "content"), "content", False),
                                                             (("c", 0, "tool", 1), "arguments", True)]
    fin = {"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    assert chatapi.event_closes("openai_chat", None, fin) == [("c", 0)]
    assert chatapi.event_closes("openai_chat", None, "[DONE]") == [()]
    name, obj = chatapi.synth_event("openai_chat", fin, ("c", 0, "tool", 1), "x")
    assert name is None and obj["id"] == "x"
    assert obj["choices"][0]["delta"] == {"tool_calls": [{"index": 1, "function": {"arguments": "x"}}]}


def test_anthropic_and_responses_events():
    d = chatapi.event_deltas("anthropic", "content_block_delta", {"type": "content_block_delta", "index": 2,
                                                                  "delta": {"type": "input_json_delta",
                                                                            "partial_json": "{"}})
    assert d[0].channel == ("a", 2) and d[0].json_text
    assert chatapi.event_deltas("anthropic", None, {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "thinking_delta", "thinking": "x"}}) == []
    assert chatapi.event_closes("anthropic", None, {"type": "content_block_stop", "index": 2}) == [("a", 2)]
    assert chatapi.synth_event("anthropic", None, ("a", 2), "t", True) == (
        "content_block_delta", {"type": "content_block_delta", "index": 2,
                                "delta": {"type": "input_json_delta", "partial_json": "t"}})
    ev = {"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "x"}
    (r,) = chatapi.event_deltas("openai_responses", None, ev)
    done = {"type": "response.output_text.done", "item_id": "m", "output_index": 0, "content_index": 0,
            "sequence_number": 7}
    assert chatapi.event_closes("openai_responses", None, done) == [r.channel]
    name, obj = chatapi.synth_event("openai_responses", done, r.channel, "y")
    assert name == "response.output_text.delta" and obj["delta"] == "y" and obj["sequence_number"] == 7
    assert chatapi.event_deltas("openai_responses", None, {"type": "response.reasoning_summary_text.delta",
                                                           "delta": "x"}) == []
    assert chatapi.response_aliases("openai_responses", {"type": "response.created",
                                                         "response": {"id": "resp_5"}}) == ["resp_5"]


def test_ollama_events_and_context_alias():
    (d,) = chatapi.event_deltas("ollama_generate", None, {"response": "x", "done": False})
    assert d.channel == ("o", "response")
    final = {"response": "", "done": True, "context": [4, 5]}
    assert chatapi.event_closes("ollama_generate", None, final) == [()]
    assert chatapi.response_aliases("ollama_generate", final) == [chatapi.context_hash([4, 5])]
    assert json.dumps(chatapi.synth_event("ollama_chat", {"model": "m"}, ("o", "content"), "z")[1]) == \
        '{"model": "m", "message": {"role": "assistant", "content": "z"}, "done": false}'


def test_the_generic_fallback_reads_the_body_the_dialects_parsed(monkeypatch):
    parsed = []
    real = chatapi._json
    monkeypatch.setattr(chatapi, "_json", lambda body: parsed.append(body) or real(body))
    body = json.dumps({"query": "Email Ann Lee", "conversation_id": "c9"}).encode()
    generic = chatapi.dialects.get("ai_generic")
    chat = chatapi.recognise_body("api.openai.com", "/v1/chat/completions", body, "application/json", fallback=generic)
    assert chat.kind == "ai_generic" and chat.conversation == "c9" and paths(chat) == {"json:$.query": "Email Ann Lee"}
    assert parsed == [body]  # one parse for the address's dialects and the fallback
    assert chatapi.recognise_body("api.openai.com", "/v1/chat/completions", body, "application/json") is None
    assert chatapi.recognise_body("api.openai.com", "/v1/chat/completions", b"{not json", None, fallback=generic) is None
