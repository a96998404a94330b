"""End to end: the AI web apps that stream over HTTP (ChatGPT web, claude.ai, Perplexity, DeepSeek web, Le
Chat), driven by httpx as their browser clients would, through a real `guardian-proxy run` (HTTPS, mitmproxy
CA, `--redirect-upstream`) to tests/support/webapp_server.py. Each app gets a three-turn conversation that
reveals a name, an e-mail, an employer, a diagnosis and an SSN; the server records what it receives and
answers naming the person it was told about, in small pieces with short sleeps."""

import json
import re
import ssl
import time
import uuid

import httpx
import pytest

from tests.support import webapp_server as W
from tests.support.llm_server import answer
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
EMPLOYER, DIAGNOSIS, SSN = "Globex Corporation", "type 2 diabetes", "536-22-8841"
TURNS = [f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon.",
         f"It's {NAME} again. I work at {EMPLOYER} and I was diagnosed with {DIAGNOSIS}.",
         f"{NAME} here: my SSN is {SSN}, please keep it with my notes."]
SURROGATE = [r"Hi, I'm (.+?) \(", r"It's (.+?) again\.", r"^(.+?) here: my SSN"]
HEADERS = {"user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
           "accept": "text/event-stream", "origin": "https://example.invalid"}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("webapps")
    srv = W.start_webapp_server(d, delay=0.02)
    px = start_proxy(d, srv.port)
    http = httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60)
    yield srv, px, http
    http.close()
    px.stop()
    srv.close()


def post(http, url, body):
    """(status, raw bytes, arrival times of the chunks that carried bytes)."""
    chunks, times = [], []
    with http.stream("POST", url, json=body, headers=HEADERS) as r:
        for c in r.iter_raw():
            if c:
                chunks.append(c)
                times.append(time.monotonic())
        return r.status_code, b"".join(chunks), times


def said_upstream(body) -> str:
    for key in ("prompt", "query_str"):
        if isinstance(body.get(key), str):
            return body[key]
    if isinstance(body.get("messages"), list):
        return body["messages"][-1]["content"]["parts"][0]
    if "0" in body:
        return body["0"]["json"]["content"][0]["text"]
    mi = body.get("messageInput")
    return mi if isinstance(mi, str) else mi[0]["text"]


def check_turn(srv, n, turn, status, raw, times, read, sent=None):
    """What every app must show, turn after turn; returns the surrogate the server was told."""
    assert status == 200, raw[:300]
    wire = srv.bodies_text(n)
    for real in (NAME, EMAIL, "Zarkowsky", SSN):
        assert real not in wire, real
    said = said_upstream(sent if sent is not None else srv.received[-1])
    if turn == 2:
        assert "[BLOCKED]" in said
    m = re.search(SURROGATE[turn], said)
    assert m, said
    real_said = TURNS[turn].replace(SSN, "[BLOCKED]")
    got = read(raw)
    assert got["text"] == answer({"prompt": real_said})[0]  # exactly what an unprotected client would read
    assert len(times) >= 5 and times[-1] - times[0] > 0.3  # it streamed in: not buffered whole
    if "thinking" in got and got["thinking"]:
        assert got["thinking"] == W.thinking_of(said)  # reasoning is passed as it came
    return m.group(1)


def test_chatgpt_web(env):
    srv, _, http = env
    conv, parent, seen = None, "client-created-root", []
    for turn, text in enumerate(TURNS):
        mid = str(uuid.uuid4())
        body = {"action": "next", "messages": [{"id": mid, "author": {"role": "user"}, "create_time": time.time(),
                                                "content": {"content_type": "text", "parts": [text]},
                                                "metadata": {"selected_sources": []}}],
                "parent_message_id": parent, "model": "gpt-5", "timezone": "Europe/Lisbon",
                "conversation_mode": {"kind": "primary_assistant"}, "supports_buffering": True,
                "supported_encodings": ["v1"]}
        if conv:
            body["conversation_id"] = conv
        n = len(srv.received)
        status, raw, times = post(http, "https://chatgpt.com/backend-api/f/conversation", body)
        seen.append(check_turn(srv, n, turn, status, raw, times, W.read_chatgpt))
        got = W.read_chatgpt(raw)
        assert got["user"] == [text.replace(SSN, "[BLOCKED]")]  # the echoed user message reads as typed
        if turn == 0:
            assert got["title"] == f"Plans for {NAME}"
        conv, parent = got["conversation_id"], "asst-" + mid
    assert len(set(seen)) == 1 and seen[0] != NAME


def test_claude_web(env):
    srv, _, http = env
    org, conv, seen = str(uuid.uuid4()), str(uuid.uuid4()), []
    url = f"https://claude.ai/api/organizations/{org}/chat_conversations/{conv}/completion"
    parent = "00000000-0000-4000-8000-000000000000"
    for turn, text in enumerate(TURNS):
        body = {"prompt": text, "parent_message_uuid": parent, "timezone": "Europe/Lisbon", "locale": "en-US",
                "model": "claude-sonnet-4-5", "attachments": [], "files": [], "sync_sources": [],
                "rendering_mode": "messages"}
        n = len(srv.received)
        status, raw, times = post(http, url, body)
        seen.append(check_turn(srv, n, turn, status, raw, times, W.read_claude))
        assert W.read_claude(raw)["thinking"]
        parent = str(uuid.uuid4())
    assert len(set(seen)) == 1


def test_perplexity_web(env):
    srv, _, http = env
    last, ctx, seen = None, str(uuid.uuid4()), []
    for turn, text in enumerate(TURNS):
        params = {"attachments": [], "language": "en-US", "timezone": "Europe/Lisbon", "search_focus": "internet",
                  "sources": ["web"], "frontend_uuid": str(uuid.uuid4()), "frontend_context_uuid": ctx,
                  "mode": "copilot", "model_preference": "turbo", "prompt_source": "user",
                  "query_source": "followup" if last else "home", "use_schematized_api": True,
                  "send_back_text_in_streaming_api": False, "dsl_query": text, "version": "2.18"}
        if last:
            params["last_backend_uuid"] = last
        n = len(srv.received)
        status, raw, times = post(http, "https://www.perplexity.ai/rest/sse/perplexity_ask",
                                  {"params": params, "query_str": text})
        seen.append(check_turn(srv, n, turn, status, raw, times, W.read_perplexity))
        got = W.read_perplexity(raw)
        assert got["answer"] == got["text"] == got["markdown"]
        assert srv.received[-1]["params"]["dsl_query"] == srv.received[-1]["query_str"]
        last = got["backend_uuid"]
    assert len(set(seen)) == 1


def test_deepseek_web(env):
    srv, _, http = env
    session, parent, seen = str(uuid.uuid4()), None, []
    for turn, text in enumerate(TURNS):
        body = {"chat_session_id": session, "parent_message_id": parent, "prompt": text, "ref_file_ids": [],
                "thinking_enabled": True, "search_enabled": False, "client_stream_id": f"20260101-{turn}"}
        n = len(srv.received)
        status, raw, times = post(http, "https://chat.deepseek.com/api/v0/chat/completion", body)
        seen.append(check_turn(srv, n, turn, status, raw, times, W.read_deepseek))
        got = W.read_deepseek(raw)
        assert got["thinking"] and (turn > 0 or got["title"] == f"Help for {NAME}")
        parent = 2 * (turn + 1)
    assert len(set(seen)) == 1


def test_lechat_web(env):
    srv, _, http = env
    seen, chat_id = [], None
    for turn, text in enumerate(TURNS):
        n = len(srv.received)
        if turn == 0:
            new = {"0": {"json": {"content": [{"type": "text", "text": text}], "files": [], "features": [],
                                  "integrations": [], "libraries": [], "incognito": False}}}
            status, raw, _ = post(http, "https://chat.mistral.ai/api/trpc/message.newChat?batch=1", new)
            assert status == 200
            lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
            echo = lines[-1]["json"][2][0][0]
            assert echo["messages"]["content"] == text  # the echoed message reads as typed
            chat_id = echo["chatId"]
            body = {"chatId": chat_id, "mode": "start", "disabledFeatures": [], "clientPromptData": {
                "currentDate": "2026-01-12", "userTimezone": "T+00:00 (Europe/Lisbon)"},
                "stableAnonymousIdentifier": "79zqlm", "shouldAwaitStreamBackgroundTasks": True,
                "shouldUseMessagePatch": True, "shouldUsePersistentStream": True}
            status, raw, times = post(http, "https://chat.mistral.ai/api/chat", body)
            sent = srv.received[-2]  # the text of the turn went with newChat
        else:
            body = {"chatId": chat_id, "mode": "append", "messageId": str(uuid.uuid4()),
                    "messageInput": [{"type": "text", "text": text}], "messageFiles": [], "features": [],
                    "shouldUseMessagePatch": True, "clientPromptData": {"currentDate": "2026-01-12"}}
            status, raw, times = post(http, "https://chat.mistral.ai/api/chat", body)
            sent = None
        seen.append(check_turn(srv, n, turn, status, raw, times, W.read_lechat, sent))
    assert len(set(seen)) == 1
