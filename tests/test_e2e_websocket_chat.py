"""End to end: WebSocket chats — OpenAI Realtime, Microsoft Copilot, the Responses API over WebSocket as
Codex uses it — with a real `websockets` client through a real `guardian-proxy run` (HTTP CONNECT, the
mitmproxy CA) to a local WebSocket server (tests/support/ws_chat_server.py) that records every message and
answers naming the person of the last user text in small delta pieces; and Gemini's web app (form POST,
length-prefixed frames) with httpx.

What reaches the server: no raw name, e-mail or SSN (the SSN as [BLOCKED]); what the client reads: the
real values, as if unprotected, streamed message by message."""

import asyncio
import json
import re
import ssl
from urllib.parse import quote

import httpx
import pytest

from tests.support import llm_server
from tests.support.proxy_process import start_proxy
from tests.support.ws_chat_server import gemini_text, parse_gemini_reply, start_gemini_server, start_ws_server

pytestmark = pytest.mark.slow

NAME, EMAIL, SSN = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com", "123-45-6789"
INTRO = f"Hi, I'm {NAME} ({EMAIL}), SSN {SSN}. Help me plan a week in Lisbon."
SEEN = f"Hi, I'm {NAME} ({EMAIL}), SSN [BLOCKED]. Help me plan a week in Lisbon."  # what the reply can echo


def expected(said: str) -> str:
    return llm_server.answer({"prompt": said})[0]


def assert_protected(wire: str) -> None:
    for raw in (NAME, EMAIL, SSN, "Zarkowsky"):
        assert raw not in wire, raw
    assert "[BLOCKED]" in wire


def surrogate_in(wire: str) -> str:
    m = re.search(r"Hi, I'm (.+?) \(", wire)
    assert m, wire[:300]
    return m.group(1)


@pytest.fixture(scope="module")
def ws_env(tmp_path_factory):
    d = tmp_path_factory.mktemp("wschat")
    srv = start_ws_server(d, ["api.openai.com", "copilot.microsoft.com", "chatgpt.com"])
    px = start_proxy(d, srv.port)
    yield srv, px
    px.stop()
    srv.close()


async def talk(px, uri: str, steps) -> list[list[dict]]:
    """Each step: (messages to send, the event that ends the step); returns the events read per step."""
    from websockets.asyncio.client import connect

    ctx = ssl.create_default_context(cafile=str(px.ca))
    out = []
    async with connect(uri, proxy=px.url, ssl=ctx, open_timeout=60, close_timeout=5) as ws:
        for sends, until in steps:
            for m in sends:
                await ws.send(json.dumps(m, ensure_ascii=False, separators=(",", ":")))
            got = []
            while True:
                ev = json.loads(await asyncio.wait_for(ws.recv(), 60))
                got.append(ev)
                if until(ev):
                    break
            out.append(got)
    return out


def run(coro):
    return asyncio.run(coro)


def test_realtime_text_and_function_call(ws_env):
    srv, px = ws_env
    n = len(srv.received)
    session = {"type": "session.update", "session": {"type": "realtime", "output_modalities": ["text"],
                                                      "instructions": f"You are talking with {NAME} ({EMAIL})."}}
    item = {"type": "conversation.item.create",
            "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": INTRO}]}}
    first, upd, echo, answer, tool = run(talk(px, "wss://api.openai.com/v1/realtime?model=gpt-realtime", [
        ([], lambda e: e["type"] == "session.created"),
        ([session], lambda e: e["type"] == "session.updated"),
        ([item], lambda e: e["type"] == "conversation.item.created"),
        ([{"type": "response.create"}], lambda e: e["type"] == "response.done"),
        ([{"type": "response.create", "response": {"tool_choice": "required"}}],
         lambda e: e["type"] == "response.done"),
    ]))
    assert upd[-1]["session"]["instructions"] == f"You are talking with {NAME} ({EMAIL})."
    assert echo[-1]["item"]["content"][0]["text"] == SEEN
    deltas = [e["delta"] for e in answer if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == expected(SEEN) and len(deltas) > 10  # streamed message by message
    assert next(e for e in answer if e["type"] == "response.output_text.done")["text"] == expected(SEEN)
    assert answer[-1]["response"]["output"][0]["content"][0]["text"] == expected(SEEN)
    args = "".join(e["delta"] for e in tool if e["type"] == "response.function_call_arguments.delta")
    assert json.loads(args) == {"name": NAME, "email": EMAIL, "note": f"follow up with {NAME}"}
    wire = srv.texts(n)
    assert_protected(wire)
    assert len(set(re.findall(r"talking with (.+?) \(", wire) + [surrogate_in(wire)])) == 1  # one surrogate


def test_copilot_turns_share_the_conversation(ws_env):
    srv, px = ws_env
    n = len(srv.received)
    uri = "wss://copilot.microsoft.com/c/api/chat?api-version=2&clientSessionId=6c6ade8f-dfa1"
    opts = {"event": "setOptions", "supportedFeatures": ["partial-generated-images"],
            "supportedCards": ["weather", "local", "image"], "ads": None}
    send = {"event": "send", "conversationId": "dRUXwuM545tff65JPZ3rn",
            "content": [{"type": "text", "text": INTRO}], "mode": "chat", "context": {}}
    (events,) = run(talk(px, uri, [([opts, send], lambda e: e["event"] == "suggestedFollowups")]))
    pieces = [e["text"] for e in events if e["event"] == "appendText"]
    assert "".join(pieces) == expected(SEEN) and len(pieces) > 10
    assert next(e for e in events if e["event"] == "titleUpdate")["title"] == f"Planning with {NAME}"
    assert [e["event"] for e in events][:2] == ["received", "startMessage"]
    wire = srv.texts(n)
    assert_protected(wire)
    assert json.loads(srv.received[n][1]) == opts  # messages without text pass unchanged
    sur = surrogate_in(wire)
    # a new connection, the same conversation: the same surrogate
    n2 = len(srv.received)
    again = {**send, "content": [{"type": "text", "text": f"Hi, I'm {NAME} (again)."}]}
    (events,) = run(talk(px, uri, [([again], lambda e: e["event"] == "suggestedFollowups")]))
    assert "".join(e["text"] for e in events if e["event"] == "appendText") == expected(f"Hi, I'm {NAME} (again).")
    assert surrogate_in(srv.texts(n2)) == sur and NAME not in srv.texts(n2)


def codex_create(text: str, **extra) -> dict:
    return {"type": "response.create", "model": "gpt-5-codex", "instructions": "You are Codex.",
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
            "tools": [], "tool_choice": "auto", "parallel_tool_calls": False, "store": False, "stream": True,
            "include": [], "prompt_cache_key": "e2e", **extra}


def test_codex_responses_over_websocket(ws_env):
    srv, px = ws_env
    n = len(srv.received)
    done = lambda e: e["type"] == "response.completed"  # noqa: E731
    first, = run(talk(px, "wss://chatgpt.com/backend-api/codex/responses", [([codex_create(INTRO)], done)]))
    deltas = [e["delta"] for e in first if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == expected(SEEN) and len(deltas) > 10
    rid = first[-1]["response"]["id"]
    wire = srv.texts(n)
    assert_protected(wire)
    sur = surrogate_in(wire)
    n2 = len(srv.received)
    follow = f"Hi, I'm {NAME} (still)."
    second, = run(talk(px, "wss://chatgpt.com/backend-api/codex/responses",
                       [([codex_create(follow, previous_response_id=rid)], done)]))
    assert "".join(e["delta"] for e in second if e["type"] == "response.output_text.delta") == expected(follow)
    assert surrogate_in(srv.texts(n2)) == sur  # previous_response_id chains the session


# ---------------------------------------------------------------------------------------------- Gemini web

GEMINI = ("https://gemini.google.com/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate"
          "?bl=boq_assistant-bard-web-server_20260507.06_p3&f.sid=-300856583778447260&hl=en&_reqid=2405763&rt=c")


def gemini_body(prompt: str, cid: str = "") -> bytes:
    conv = [cid, "r_1a2b3c4d5e6f7a8b" if cid else "", "rc_9a8b7c6d5e4f3a2b" if cid else "", None, None, None,
            None, None, None, ""]
    inner = [[prompt, 0, None, None, None, None, 0], ["en"], conv, "!BQalBl7NAAa-token", None, None, [1], 0]
    outer = json.dumps([None, json.dumps(inner, ensure_ascii=False, separators=(",", ":"))], ensure_ascii=False,
                       separators=(",", ":"))
    return f"f.req={quote(outer, safe=chr(33) + '~*()' + chr(39) + '-_.')}&at=AJvLN6M0lWxQ%3A1765000000000&".encode()


@pytest.fixture(scope="module")
def gemini_env(tmp_path_factory):
    d = tmp_path_factory.mktemp("gemini")
    srv = start_gemini_server(d, ["gemini.google.com"])
    px = start_proxy(d, srv.port)
    http = httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60)
    yield srv, px, http
    http.close()
    px.stop()
    srv.close()


def test_gemini_web_form_and_frames(gemini_env):
    srv, px, http = gemini_env
    headers = {"content-type": "application/x-www-form-urlencoded;charset=UTF-8", "x-same-domain": "1",
               "origin": "https://gemini.google.com"}
    with http.stream("POST", GEMINI, content=gemini_body(INTRO), headers=headers) as r:
        assert r.status_code == 200
        chunks = list(r.iter_raw())
    data = b"".join(chunks)
    objs = parse_gemini_reply(data)  # every count right for the de-masked text
    text, inner = gemini_text(objs)
    assert text == expected(SEEN) + " \U0001F600 café"
    assert inner[4][0][37][0][0] == f"Thinking about {NAME}"
    assert len(chunks) > 1  # streamed, not buffered
    prompt = srv.prompts[-1]
    assert_protected(prompt)
    sent = srv.raw[-1]
    assert sent.endswith(b"&at=AJvLN6M0lWxQ%3A1765000000000&") and b"%20" in sent  # the browser's encoding kept
    sur = surrogate_in(prompt)
    # the next turn names the chat the reply announced: the same session, the same surrogate
    cid = inner[1][0]
    follow = f"Hi, I'm {NAME} (again), what about Porto?"
    with http.stream("POST", GEMINI, content=gemini_body(follow, cid), headers=headers) as r:
        data = r.read()
    assert gemini_text(parse_gemini_reply(data))[0] == expected(follow) + " \U0001F600 café"
    assert surrogate_in(srv.prompts[-1]) == sur and NAME not in srv.prompts[-1]
