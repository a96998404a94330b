"""The AI web apps' dialects (ChatGPT web, claude.ai, Perplexity, DeepSeek web, Le Chat): their request
bodies (shapes of published captures) and their streams (tests/support/webapp_server.py), de-masked through
the real StreamDemasker cut at every byte, with thinking left as it was."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.chatapi.dialects import get
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker
from tests.support import webapp_server as W
from tests.support.llm_server import answer, pieces

DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
SAID = "I'm Alex Smith (alex.smith@example.net). Help me plan a week in Lisbon."
SHORT = "Hi Alex Smith!"
SSE = "text/event-stream; charset=utf-8"


def recognise(host, path, body):
    return chatapi.recognise_body(host, path, json.dumps(body).encode(), "application/json")


def paths(req):
    return {s.path: s.text for s in req.slots}


def run(kind, raw, step, ct=SSE, aliases=None):
    sd = StreamDemasker(kind, DM, get(kind).framer(ct), on_alias=aliases.append if aliases is not None else None)
    return b"".join(sd(raw[i:i + step]) for i in range(0, len(raw), step)) + sd(b"")


def split_inside(text: str, sur: str = "Alex Smith") -> bool:
    """True when the 3–5 character pieces cut an occurrence of `sur` in two (a surrogate split across deltas)."""
    cuts, pos = set(), 0
    for p in pieces(text):
        pos += len(p)
        cuts.add(pos)
    i = text.find(sur)
    while i >= 0:
        if any(i < c < i + len(sur) for c in cuts):
            return True
        i = text.find(sur, i + 1)
    return False


# ---------------------------------------------------------------------- requests

CHATGPT_FIRST = {
    "action": "next", "messages": [{
        "id": "7d5dbfb0-6511-4192-b5f2-13779fed444e", "author": {"role": "user"}, "create_time": 1782496004.2,
        "content": {"content_type": "text", "parts": [SAID]},
        "metadata": {"selected_sources": [], "serialization_metadata": {"custom_symbol_offsets": []}}}],
    "parent_message_id": "client-created-root", "model": "gpt-5-5", "timezone_offset_min": -180,
    "timezone": "Europe/Lisbon", "conversation_mode": {"kind": "primary_assistant"}, "supports_buffering": True,
    "supported_encodings": ["v1"], "client_contextual_info": {"app_name": "chatgpt.com"}}


def test_chatgpt_first_turn_and_follow_up():
    req = recognise("chatgpt.com", "/backend-api/f/conversation", CHATGPT_FIRST)
    assert req.kind == "chatgpt_web" and req.stream and not req.history and req.turns == 1
    assert paths(req) == {"json:$.messages[0].content.parts[0]": SAID}
    assert req.previous == "msg:7d5dbfb0-6511-4192-b5f2-13779fed444e" and req.conversation is None
    follow = {**CHATGPT_FIRST, "conversation_id": "67c9ad29-a9b0-800d-861a-3bc3ca283e62",
              "parent_message_id": "011073a6-8057-4f6a-bb95-2f664bced7c8"}
    req2 = recognise("chat.openai.com", "/backend-api/conversation", follow)
    assert req2.previous == "67c9ad29-a9b0-800d-861a-3bc3ca283e62"
    anon = recognise("chatgpt.com", "/backend-anon/f/conversation", CHATGPT_FIRST)
    assert anon.kind == "chatgpt_web"
    chatapi.set_text(req.data, req.slots[0].parts, "changed")
    assert json.loads(get("chatgpt_web").serialise(req))["messages"][0]["content"]["parts"] == ["changed"]


def test_chatgpt_multimodal_parts_and_other_hosts():
    body = {**CHATGPT_FIRST, "messages": [{"id": "m1", "author": {"role": "user"}, "content": {
        "content_type": "multimodal_text", "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc", "width": 10},
            "What does Alex Smith's badge say?",
            {"content_type": "audio_transcription", "text": "Alex Smith speaking"}]}}]}
    req = recognise("chatgpt.com", "/backend-api/f/conversation", body)
    assert paths(req) == {"json:$.messages[0].content.parts[1]": "What does Alex Smith's badge say?",
                          "json:$.messages[0].content.parts[2].text": "Alex Smith speaking"}
    assert [d.name for d in chatapi.dialects.find("example.com", "/backend-api/conversation")] == []
    assert recognise("chatgpt.com", "/backend-api/conversation/init", CHATGPT_FIRST) is None
    assert recognise("chatgpt.com", "/backend-api/f/conversation", {"hello": 1}) is None


def test_claude_completion_prompt_attachments_and_conversation_from_path():
    path = ("/api/organizations/42760539-e47e-458e-9fb1-1a4943dad87f/chat_conversations/"
            "c19f785e-f3f3-43e4-b0f6-342197884f8b/completion")
    body = {"prompt": SAID, "parent_message_uuid": "00000000-0000-4000-8000-000000000000",
            "timezone": "Europe/Lisbon", "locale": "en-US", "model": "claude-sonnet-4-5", "rendering_mode": "messages",
            "attachments": [{"file_name": "cv.txt", "file_type": "text/plain", "file_size": 40,
                             "extracted_content": "Alex Smith, 12 Rua Augusta"}],
            "files": ["file-uuid-1"], "tools": [{"name": "web_search", "description": "Search the web"}],
            "turn_message_uuids": {"human_message_uuid": "h1", "assistant_message_uuid": "a1"}}
    req = recognise("claude.ai", path, body)
    assert req.kind == "claude_web" and not req.history and req.stream
    assert req.conversation == "c19f785e-f3f3-43e4-b0f6-342197884f8b"
    assert paths(req) == {"json:$.prompt": SAID, "json:$.attachments[0].extracted_content": "Alex Smith, 12 Rua Augusta"}
    retry = recognise("claude.ai", path.replace("/completion", "/retry_completion"), {"rendering_mode": "messages"})
    assert retry.kind == "claude_web" and retry.slots == []
    old = recognise("claude.ai", "/api/append_message", {"completion": {"prompt": SAID, "timezone": "UTC"},
                                                          "organization_uuid": "o", "conversation_uuid": "c1",
                                                          "text": SAID, "attachments": []})
    assert old.conversation == "c1" and set(paths(old)) == {"json:$.completion.prompt", "json:$.text"}


def test_perplexity_ask_first_question_and_follow_up():
    params = {"attachments": [], "language": "en-US", "timezone": "Europe/Lisbon", "search_focus": "internet",
              "sources": ["web"], "frontend_uuid": "f-1", "mode": "copilot", "model_preference": "turbo",
              "frontend_context_uuid": "ctx-1", "prompt_source": "user", "query_source": "home",
              "use_schematized_api": True, "send_back_text_in_streaming_api": False, "dsl_query": SAID,
              "version": "2.18"}
    req = recognise("www.perplexity.ai", "/rest/sse/perplexity_ask", {"params": params, "query_str": SAID})
    assert req.kind == "perplexity_web" and not req.history
    assert paths(req) == {"json:$.query_str": SAID, "json:$.params.dsl_query": SAID}
    assert req.previous == "front:f-1"
    follow = {"params": {**params, "last_backend_uuid": "b-1", "read_write_token": "rw", "query_source": "followup"},
              "query_str": "and then?"}
    assert recognise("www.perplexity.ai", "/rest/sse/perplexity_ask", follow).previous == "b-1"


def test_deepseek_completion():
    body = {"chat_session_id": "d213f7b1-0aa7-47a2-a6cf-3b4910a66b3a", "parent_message_id": None, "prompt": SAID,
            "ref_file_ids": [], "thinking_enabled": True, "search_enabled": False,
            "client_stream_id": "20251122-a966ea999de140c5"}
    req = recognise("chat.deepseek.com", "/api/v0/chat/completion", body)
    assert req.kind == "deepseek_web" and req.conversation == "d213f7b1-0aa7-47a2-a6cf-3b4910a66b3a"
    assert paths(req) == {"json:$.prompt": SAID} and not req.history and req.stream
    assert recognise("api.deepseek.com", "/api/v0/chat/completion", body) is None


def test_lechat_new_chat_start_and_append():
    new = {"0": {"json": {"content": [{"type": "text", "text": SAID}], "voiceInput": None, "files": [],
                          "features": ["beta-websearch"], "integrations": [], "libraries": [], "incognito": False},
                 "meta": {"values": {"voiceInput": ["undefined"]}}}}
    req = recognise("chat.mistral.ai", "/api/trpc/message.newChat?batch=1", new)
    assert req.kind == "lechat_web_newchat" and paths(req) == {"json:$['0'].json.content[0].text": SAID}
    batch = recognise("chat.mistral.ai", "/api/trpc/event.sendEventToDatalake,message.newChat?batch=1",
                      {"0": {"json": {"name": "prompt_submitted"}}, "1": new["0"]})
    assert list(paths(batch).values()) == [SAID]
    start = recognise("chat.mistral.ai", "/api/chat", {"chatId": "66b987d8", "mode": "start", "disabledFeatures": [],
                                                       "shouldUseMessagePatch": True})
    assert start.kind == "lechat_web" and start.slots == [] and start.previous == "66b987d8"
    append = recognise("chat.mistral.ai", "/api/chat", {"chatId": "66b987d8", "mode": "append", "messageId": "m2",
                                                        "messageInput": [{"type": "text", "text": "It's Alex Smith."}],
                                                        "messageFiles": []})
    assert paths(append) == {"json:$.messageInput[0].text": "It's Alex Smith."} and append.turns == 1
    old = recognise("chat.mistral.ai", "/api/chat", {"chatId": "c", "mode": "append", "messageInput": "hello"})
    assert paths(old) == {"json:$.messageInput": "hello"}
    assert recognise("localhost", "/api/chat", {"chatId": "c", "mode": "append"}) is None  # Ollama's path elsewhere


# ---------------------------------------------------------------------- streams

STEPS = [1, 2, 3, 5, 8, 13, 64, 10**6]
EXPECTED = DM.full(answer({"prompt": SAID})[0])
THINKING = W.thinking_of(SAID)


def streams(said=SAID, text=None, thinking=True):
    return {
        "chatgpt_web": (b"".join(W.chatgpt_stream(said, "conv-1", "u-1", True, thinking=thinking, text=text)),
                        W.read_chatgpt),
        "claude_web": (b"".join(W.claude_stream(said, thinking=thinking, text=text)), W.read_claude),
        "perplexity_web": (b"".join(W.perplexity_stream(said, "back-1", text=text, lean=text is not None)),
                           W.read_perplexity),
        "deepseek_web": (b"".join(W.deepseek_stream(said, thinking=thinking, text=text)), W.read_deepseek),
        "lechat_web": (b"".join(W.lechat_stream(said, "m-1", "u-1", reasoning=thinking, text=text)), W.read_lechat),
    }


KINDS = list(streams())


def test_the_answers_split_a_surrogate_across_two_deltas():
    assert split_inside(answer({"prompt": SAID})[0]) and split_inside(SHORT)
    assert split_inside(answer({"prompt": SAID})[0], "alex.smith@example.net")


@pytest.mark.parametrize("kind", KINDS)
def test_stream_demasked_at_every_chunk_size_with_thinking_untouched(kind):
    raw, reader = streams()[kind]
    outs = {run(kind, raw, s) for s in STEPS}
    assert len(outs) == 1  # the same bytes however the stream is cut
    got = reader(outs.pop())
    assert got["text"] == EXPECTED
    assert "Maria Gonzalez's details; MARIA GONZALEZ is on file" in got["text"] and "Alex" not in got["text"]
    if "thinking" in got and kind != "perplexity_web":
        assert got["thinking"] == THINKING  # reasoning is never changed (it still names the surrogate)


@pytest.mark.parametrize("kind", KINDS)
def test_every_byte_split(kind):
    raw, reader = streams(text=SHORT, thinking=kind == "deepseek_web")[kind]
    ref = run(kind, raw, 10**6)
    assert reader(ref)["text"] == DM.full(SHORT) == "Hi Maria Gonzalez!"
    assert run(kind, raw, 1) == ref
    for i in range(1, len(raw)):
        sd = StreamDemasker(kind, DM, get(kind).framer(SSE))
        assert sd(raw[:i]) + sd(raw[i:]) + sd(b"") == ref, i


def test_chatgpt_echo_title_and_alias():
    raw, _ = streams()["chatgpt_web"]
    seen = []
    out = run("chatgpt_web", raw, 7, aliases=seen)
    got = W.read_chatgpt(out)
    assert got["user"] == [DM.full(SAID)] and got["title"] == "Plans for Maria Gonzalez"
    inputs = [o for _, o in W.read_sse(out) if isinstance(o, dict) and o.get("type") == "input_message"]
    assert inputs[0]["input_message"]["content"]["parts"] == [DM.full(SAID)]
    assert seen == ["conv-1"]  # announced once, for the next turn's conversation_id
    names = [n for n, o in W.read_sse(out)]
    done = names.index(None, len(names) - 3)
    assert out.endswith(b"data: [DONE]\n\n") and done > 0
    # the held tail is flushed before message_stream_complete, as a delta on the answer's path
    objs = [o for _, o in W.read_sse(out)]
    complete = next(i for i, o in enumerate(objs) if isinstance(o, dict) and o.get("type") == "message_stream_complete")
    assert all(not (isinstance(o, dict) and o.get("p") == "/message/content/parts/0") for o in objs[complete:])


def test_chatgpt_old_format_cumulative_messages():
    text = answer({"prompt": SAID})[0]
    evs = [W._sse(None, {"message": {"id": "a", "author": {"role": "assistant"}, "content": {
        "content_type": "text", "parts": [text[:n]]}, "status": "in_progress"}, "conversation_id": "c9"})
        for n in range(10, len(text) + 1, 15)] + [W._sse(None, {"message": {"id": "a", "author": {"role": "assistant"},
                                                                          "content": {"content_type": "text",
                                                                                      "parts": [text]}},
                                                              "conversation_id": "c9"}), b"data: [DONE]\n\n"]
    objs = W.read_sse(run("chatgpt_web", b"".join(evs), 5))
    assert objs[-2][1]["message"]["content"]["parts"] == [EXPECTED]


def test_claude_old_completion_events():
    text = answer({"prompt": SAID})[0]
    evs = [W._sse(None, {"type": "completion", "completion": p, "stop_reason": None, "model": "claude-2.0",
                         "log_id": "x"}) for p in pieces(text)]
    evs.append(W._sse(None, {"type": "completion", "completion": "", "stop_reason": "stop_sequence", "model": "claude-2.0"}))
    objs = [o for _, o in W.read_sse(run("claude_web", b"".join(evs), 3))]
    assert "".join(o["completion"] for o in objs) == EXPECTED and objs[-1]["stop_reason"] == "stop_sequence"


def test_perplexity_final_answer_alias_and_old_text_field():
    raw, _ = streams()["perplexity_web"]
    seen = []
    got = W.read_perplexity(run("perplexity_web", raw, 11, aliases=seen))
    assert got["answer"] == EXPECTED and got["markdown"] == EXPECTED and seen == ["back-1"]
    old = W._sse("message", {"backend_uuid": "b2", "status": "COMPLETED",
                             "text": json.dumps({"answer": "Dear Alex Smith, done.", "web_results": []})})
    out = W.read_sse(run("perplexity_web", old, 4))
    assert json.loads(out[0][1]["text"]) == {"answer": "Dear Maria Gonzalez, done.", "web_results": []}


def test_deepseek_2025_shape_thinking_content_and_sticky_path():
    text = answer({"prompt": SAID})[0]
    ps = pieces(text)
    think = W.thinking_of(SAID)
    evs = [W._sse("ready", {"request_message_id": 1, "response_message_id": 2}),
           W._sse(None, {"v": {"response": {"message_id": 2, "status": "WIP", "content": "", "thinking_content": None}}}),
           W._sse(None, {"p": "response/thinking_content", "v": think[:6]}), W._sse(None, {"o": "APPEND", "v": think[6:20]}),
           W._sse(None, {"v": think[20:]}), W._sse(None, {"p": "response/thinking_elapsed_secs", "o": "SET", "v": 1}),
           W._sse(None, {"p": "response/content", "v": ps[0]})] + [W._sse(None, {"v": p}) for p in ps[1:]] + [
           W._sse(None, {"p": "response/status", "v": "FINISHED"}), W._sse("finish", {})]
    out = run("deepseek_web", b"".join(evs), 2)
    objs = [o for n, o in W.read_sse(out) if n is None]
    assert "".join(o["v"] for o in objs[1:4]) == think  # untouched
    content = "".join(o["v"] for o in objs if isinstance(o.get("v"), str) and o not in objs[1:4]
                      and o.get("p") not in ("response/status",))
    assert content == EXPECTED


def test_lechat_new_chat_reply_is_demasked_and_names_the_chat():
    for reply in (W.lechat_newchat_reply(SAID, "chat-9", "u-9"), W.lechat_newchat_reply(SAID, "chat-9", "u-9")[:-1]):
        seen = []
        out = run("lechat_web_newchat", reply, 9, ct="application/json", aliases=seen)
        lines = [json.loads(x) for x in out.decode().splitlines() if x.strip()]
        assert lines[-1]["json"][2][0][0]["messages"]["content"] == DM.full(SAID)
        assert seen == ["chat-9"]


def test_lechat_old_vercel_text_lines():
    text = answer({"prompt": SAID})[0]
    raw = b"".join(b"0:" + json.dumps(p).encode() + b"\n" for p in pieces(text)) + b'd:{"finishReason":"stop"}\n'
    out = run("lechat_web", raw, 3)
    assert "".join(json.loads(ln[2:]) for ln in out.decode().splitlines() if ln.startswith("0:")) == EXPECTED
    assert out.endswith(b'd:{"finishReason":"stop"}\n')
