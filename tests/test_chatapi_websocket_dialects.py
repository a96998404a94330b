"""The WebSocket chat dialects: Microsoft Copilot (`copilot`), OpenAI Realtime (`openai_realtime`) and the
Responses API over WebSocket (`openai_responses_ws`, as Codex uses it): client messages read and written
back byte for byte, and server events de-masked message by message (surrogates split across two delta
messages restored, held text flushed as a synthetic delta before the event that closes its channel).

`ws_loop` is a minimal re-implementation of what the WebSocket hook does with a dialect (closes → flush
through `synth`, deltas through a `Channel`, other events de-masked whole); the same sequences also go
through the real `StreamDemasker.message`."""

import json

import pytest

from guardian_proxy import chatapi
from guardian_proxy.chatapi.sse import MessageFramer
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, demask_json
from tests.support import llm_server
from tests.support.ws_chat_server import _Ids, copilot_events, realtime_response, responses_events

DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
SAID = "Hi, I'm Alex Smith (alex.smith@example.net). Plan a week in Lisbon."
REAL = "Hi, I'm Maria Gonzalez (maria.g@gmail.com). Plan a week in Lisbon."


def recognise(host: str, path: str, msg) -> chatapi.ChatRequest | None:
    body = msg if isinstance(msg, bytes) else json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode()
    return chatapi.recognise_body(host, path, body, None, websocket=True)


def ws_loop(kind: str, messages: list[dict], dm: Demasker = DM) -> list[dict]:
    d = chatapi.dialects.get(kind)
    channels, out = {}, []

    def flush(prefix, tpl):
        for key in [k for k in channels if k[:len(prefix)] == prefix]:
            ch = channels.pop(key)
            text = ch.flush()
            if text:
                out.append(d.synth(tpl, key, text, ch.json_text)[1])

    for m in messages:
        obj = json.loads(json.dumps(m))
        for prefix in d.closes(None, obj) or []:
            flush(prefix, obj)
        refs = d.deltas(None, obj)
        for r in refs:
            ch = channels.setdefault(r.channel, dm.channel(r.json_text))
            r.holder[r.key] = ch.feed(r.holder[r.key])
        if not refs:
            demask_json(obj, dm)
        out.append(obj)
    flush((), None)
    return out


def real_loop(kind: str, messages: list[dict]) -> list[dict]:
    sd = StreamDemasker(kind, DM, MessageFramer())
    out = []
    for m in messages:
        out += [json.loads(x) for x in sd.message(json.dumps(m).encode())]
    return out


LOOPS = [ws_loop, real_loop]


# ---------------------------------------------------------------------------------------------- Copilot

COPILOT = ("copilot.microsoft.com", "/c/api/chat?api-version=2&clientSessionId=6c6ade8f&accessToken=x")


def test_copilot_send_is_a_turn_with_its_conversation():
    raw = ('{"event":"send","conversationId":"dRUXwuM545tff65JPZ3rn","content":[{"type":"image","url":"https://x/i.png"},'
           '{"type":"text","text":"Ich bin Jürgen, ' + SAID + '"}],"mode":"chat","context":{"edge":{"title":'
           '"Alex Smith\'s page","pageUrl":"https://a.example/p","id":"x1"}}}').encode()
    chat = recognise(*COPILOT, raw)
    assert chat.kind == "copilot" and chat.conversation == "dRUXwuM545tff65JPZ3rn" and not chat.history
    assert chat.stream and chat.turns == 1
    assert [(s.parts, s.role) for s in chat.slots] == [(("content", 1, "text"), "user"),
                                                       (("context", "edge", "title"), "user")]
    d = chatapi.dialects.get("copilot")
    assert d.serialise(chat) == raw
    chatapi.set_text(chat.data, chat.slots[0].parts, 'Maria "G"')
    assert json.loads(d.serialise(chat))["content"][1]["text"] == 'Maria "G"'


@pytest.mark.parametrize("msg", [
    {"event": "setOptions", "supportedFeatures": ["partial-generated-images"], "supportedCards": ["weather"]},
    {"event": "send", "conversationId": "c", "content": [{"type": "image", "url": "u"}], "mode": "chat"},
    {"event": "challengeResponse", "token": "t", "method": "cloudflare"},
    {"event": "ping"},
])
def test_copilot_messages_without_text_are_not_chats(msg):
    assert recognise(*COPILOT, msg) is None


def test_copilot_only_on_its_host_and_python_style_round_trip():
    msg = {"event": "send", "conversationId": "c1", "content": [{"type": "text", "text": "héllo"}], "mode": "chat"}
    assert recognise("example.com", "/c/api/chat", msg) is None
    assert chatapi.recognise_body(*COPILOT, json.dumps(msg).encode(), None) is None  # not a WebSocket message
    raw = json.dumps(msg).encode()  # json.dumps defaults: ", " / ": " and \u escapes (gpt4free sends this)
    chat = chatapi.recognise_body(*COPILOT, raw, None, websocket=True)
    assert chatapi.dialects.get("copilot").serialise(chat) == raw


@pytest.mark.parametrize("loop", LOOPS)
def test_copilot_reply_demasked_across_messages(loop):
    events = copilot_events(SAID, "conv1")
    appends = [e["text"] for e in events if e["event"] == "appendText"]
    assert any(p.endswith("Al") or p.endswith("Ale") for p in appends)  # a surrogate is split
    out = loop("copilot", events)
    text = "".join(e["text"] for e in out if e["event"] == "appendText")
    real, _ = llm_server.answer({"prompt": REAL})
    assert text == real == DM.full(llm_server.answer({"prompt": SAID})[0])
    assert next(e for e in out if e["event"] == "titleUpdate")["title"] == "Planning with Maria Gonzalez"
    assert next(e for e in out if e["event"] == "suggestedFollowups")["suggestions"][0] == \
        "What else should Maria Gonzalez see?"
    kinds = [e["event"] for e in out]
    assert kinds[-4:] == ["partCompleted", "done", "titleUpdate", "suggestedFollowups"]


def test_copilot_held_text_flushed_before_part_completed():
    mid = "cunq"
    events = [{"event": "appendText", "messageId": mid, "partId": "0", "text": "Thanks, Alex"},
              {"event": "appendText", "messageId": mid, "partId": "1", "text": "Hi Al"},
              {"event": "partCompleted", "messageId": mid, "partId": "0", "id": "7"},
              {"event": "appendText", "messageId": mid, "partId": "1", "text": "ex Smith!"},
              {"event": "done", "messageId": mid, "id": "9"}]
    for loop in LOOPS:
        out = loop("copilot", events)
        assert out == [{"event": "appendText", "messageId": mid, "partId": "0", "text": "Thanks, "},
                       {"event": "appendText", "messageId": mid, "partId": "1", "text": "Hi "},
                       {"event": "appendText", "messageId": mid, "partId": "0", "text": "Maria"},
                       {"event": "partCompleted", "messageId": mid, "partId": "0", "id": "7"},
                       {"event": "appendText", "messageId": mid, "partId": "1", "text": "Maria Gonzalez!"},
                       {"event": "done", "messageId": mid, "id": "9"}], loop


def test_copilot_replace_text_closes_the_part_and_is_demasked_whole():
    mid = "m"
    out = ws_loop("copilot", [{"event": "appendText", "messageId": mid, "partId": "0", "text": "Dear Alex"},
                              {"event": "replaceText", "messageId": mid, "partId": "0", "text": "Dear Alex Smith."}])
    assert [e["text"] for e in out] == ["Dear ", "Maria", "Dear Maria Gonzalez."]


# ---------------------------------------------------------------------------------------------- Realtime

RT = ("api.openai.com", "/v1/realtime?model=gpt-realtime")


def test_realtime_client_events():
    d = chatapi.dialects.get("openai_realtime")
    s = recognise(*RT, {"type": "session.update", "event_id": "e1",
                        "session": {"type": "realtime", "instructions": f"The caller is {SAID}", "voice": "alloy"}})
    assert [(x.parts, x.role, x.turn) for x in s.slots] == [(("session", "instructions"), "system", 0)]
    assert s.turns == 0 and not s.history and s.conversation is None and s.stream
    item = recognise(*RT, {"type": "conversation.item.create", "item": {
        "type": "message", "role": "user", "content": [{"type": "input_audio", "audio": "UklGRg=="},
                                                       {"type": "input_text", "text": SAID}]}})
    assert [(x.parts, x.role, x.turn) for x in item.slots] == [(("item", "content", 1, "text"), "user", 1)]
    assert item.turns == 1
    out = recognise(*RT, {"type": "conversation.item.create", "item": {
        "type": "function_call_output", "call_id": "call_1", "output": json.dumps({"email": "a@b.c"})}})
    assert [(x.parts, x.role) for x in out.slots] == [(("item", "output"), "tool")] and out.turns == 0
    resp = recognise(*RT, {"type": "response.create", "response": {
        "instructions": "Greet Alex.", "input": [{"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "I'm Alex"}]}]}})
    assert [x.parts for x in resp.slots] == [("response", "instructions"), ("response", "input", 0, "content", 0,
                                                                            "text")]
    raw = json.dumps({"type": "session.update", "session": {"instructions": "Schön, Alex"}}).encode()
    chat = chatapi.recognise_body("my-res.openai.azure.com", "/openai/realtime?api-version=2025-04-01-preview"
                                  "&deployment=gpt-realtime", raw, None, websocket=True)
    assert chat.kind == "openai_realtime" and d.serialise(chat) == raw  # the SDK's json.dumps style kept


@pytest.mark.parametrize("msg", [
    {"type": "input_audio_buffer.append", "audio": "AAAA"},
    {"type": "input_audio_buffer.commit"},
    {"type": "response.create"},
    {"type": "response.create", "response": {"modalities": ["text"]}},
    {"type": "conversation.item.create", "item": {"type": "message", "role": "user",
                                                  "content": [{"type": "input_audio", "audio": "AAAA"}]}},
    {"type": "session.update", "session": {"voice": "alloy"}},
])
def test_realtime_events_without_text_are_not_chats(msg):
    assert recognise(*RT, msg) is None


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("audio", [False, True])
def test_realtime_text_and_transcript_stream(loop, audio):
    events = realtime_response(SAID, ["audio"] if audio else ["text"], False, _Ids(), 1)
    kind = "response.output_audio_transcript" if audio else "response.output_text"
    out = loop("openai_realtime", events)
    text = "".join(e["delta"] for e in out if e["type"] == kind + ".delta")
    real, _ = llm_server.answer({"prompt": REAL})
    assert text == real
    done = next(e for e in out if e["type"] == kind + ".done")
    assert done["transcript" if audio else "text"] == real
    final = next(e for e in out if e["type"] == "response.done")
    part = final["response"]["output"][0]["content"][0]
    assert part["transcript" if audio else "text"] == real
    # audio deltas pass untouched, in order
    assert [e for e in out if e["type"] == "response.output_audio.delta"] == \
        [e for e in events if e["type"] == "response.output_audio.delta"]


@pytest.mark.parametrize("loop", LOOPS)
def test_realtime_function_call_arguments_are_json_text(loop):
    events = realtime_response(SAID, ["text"], True, _Ids(), 1)
    out = loop("openai_realtime", events)
    args = "".join(e["delta"] for e in out if e["type"] == "response.function_call_arguments.delta")
    assert json.loads(args) == {"name": "Maria Gonzalez", "email": "maria.g@gmail.com",
                                "note": "follow up with Maria Gonzalez"}
    assert json.loads(next(e for e in out if e["type"] == "response.function_call_arguments.done")["arguments"]) \
        == json.loads(args)


def test_realtime_audio_is_never_scanned_and_synth_has_the_event_shape():
    audio = {"type": "response.output_audio.delta", "event_id": "e9", "response_id": "resp_1", "item_id": "i",
             "output_index": 0, "content_index": 0, "delta": "QUJD/Smith/Alex+Smith=="}
    events = [{"type": "response.output_text.delta", "event_id": "e1", "response_id": "resp_1", "item_id": "i",
               "output_index": 0, "content_index": 0, "delta": "Bye Alex"},
              audio,
              {"type": "response.function_call_arguments.delta", "event_id": "e2", "response_id": "resp_1",
               "item_id": "f", "output_index": 1, "call_id": "call_7", "delta": '{"who":"Alex'},
              {"type": "response.done", "event_id": "e3", "response": {"id": "resp_1", "output": []}}]
    for loop in LOOPS:
        out = loop("openai_realtime", events)
        assert out[1] == audio
        flushed = [e for e in out[3:] if e["type"].endswith(".delta")]
        assert [e["delta"] for e in flushed] == ["Maria", 'Maria']
        t, f = flushed
        assert t["type"] == "response.output_text.delta" and t["response_id"] == "resp_1" and t["item_id"] == "i" \
            and t["output_index"] == 0 and t["content_index"] == 0 and t["event_id"].startswith("event_")
        assert f["type"] == "response.function_call_arguments.delta" and f["call_id"] == "call_7" \
            and "content_index" not in f
        assert out[-1]["type"] == "response.done"


def test_realtime_input_transcription_and_echoed_items():
    events = [{"type": "conversation.item.input_audio_transcription.delta", "event_id": "e1", "item_id": "u1",
               "content_index": 0, "delta": "I am Alex"},
              {"type": "conversation.item.input_audio_transcription.completed", "event_id": "e2", "item_id": "u1",
               "content_index": 0, "transcript": "I am Alex Smith"},
              {"type": "conversation.item.created", "event_id": "e3", "item": {
                  "id": "u2", "type": "message", "role": "user",
                  "content": [{"type": "input_text", "text": "mail alex.smith@example.net"}]}},
              {"type": "session.updated", "event_id": "e4", "session": {"instructions": "Help Alex Smith"}}]
    out = ws_loop("openai_realtime", events)
    assert [e.get("delta") for e in out[:2]] == ["I am ", "Maria"]
    assert "output_index" not in out[1] and out[1]["type"] == "conversation.item.input_audio_transcription.delta"
    assert out[2]["transcript"] == "I am Maria Gonzalez"
    assert out[3]["item"]["content"][0]["text"] == "mail maria.g@gmail.com"
    assert out[4]["session"]["instructions"] == "Help Maria Gonzalez"


# ---------------------------------------------------------------------------------------------- Responses WS

CODEX = ("chatgpt.com", "/backend-api/codex/responses")


def codex_create(text: str, **extra) -> dict:
    return {"type": "response.create", "model": "gpt-5-codex", "instructions": "You are Codex.",
            "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "cwd"}]},
                      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
            "tools": [], "tool_choice": "auto", "parallel_tool_calls": False, "reasoning": None, "store": False,
            "stream": True, "include": [], "prompt_cache_key": "01234", **extra}


def test_codex_response_create():
    raw = json.dumps(codex_create(SAID + " ünïcode"), ensure_ascii=False, separators=(",", ":")).encode()
    chat = recognise(*CODEX, raw)
    assert chat.kind == "openai_responses_ws" and chat.stream and chat.history and chat.turns == 1
    assert [(s.parts, s.role) for s in chat.slots] == [(("instructions",), "system"),
                                                       (("input", 0, "content", 0, "text"), "system"),
                                                       (("input", 1, "content", 0, "text"), "user")]
    assert chatapi.dialects.get("openai_responses_ws").serialise(chat) == raw
    nxt = recognise(*CODEX, codex_create("and again", previous_response_id="resp_123"))
    assert nxt.previous == "resp_123" and not nxt.history
    api = recognise("api.openai.com", "/v1/responses", codex_create("hi"))
    assert api.kind == "openai_responses_ws"
    app = recognise(*CODEX, {"type": "response.append", "input": [{"type": "message", "role": "user",
                                                                  "content": [{"type": "input_text", "text": "x"}]}]})
    assert app is not None and not app.history
    assert recognise(*CODEX, {"type": "response.processed", "response_id": "resp_1"}) is None
    assert chatapi.recognise_body(*CODEX, raw, "application/json").kind == "openai_responses"  # HTTP: the SSE one


@pytest.mark.parametrize("loop", LOOPS)
def test_codex_events_demasked(loop):
    events = responses_events(codex_create(SAID))
    out = loop("openai_responses_ws", events)
    text = "".join(e["delta"] for e in out if e["type"] == "response.output_text.delta")
    real, _ = llm_server.answer({"prompt": REAL})
    assert text == real
    assert next(e for e in out if e["type"] == "response.completed")["response"]["output"][0]["content"][0][
        "text"] == real
    assert chatapi.dialects.get("openai_responses_ws").aliases(events[-1]) == [events[-1]["response"]["id"]]
