"""End to end: the real google-genai SDK (Gemini API and Vertex AI, sync and async, JSON and `alt=sse` streams),
the anthropic SDK's AnthropicVertex (rawPredict / streamRawPredict) and the cohere SDK (ClientV2 chat and
chat_stream, v1 chat_stream) through a real `guardian-proxy run` (HTTPS, mitmproxy CA) to a local mock of
those services (tests/support/google_cohere_server.py) that records what it receives, answers naming the
person it was told about, and streams in small pieces with a pause between them.

The SDKs reach the proxy through their own httpx clients: google-genai `HttpOptions(httpx_client=…,
httpx_async_client=…)` (an async httpx client also keeps the SDK off aiohttp), Vertex mode with
`project`/`location` and a static `google.oauth2.credentials.Credentials(token=…)` (no Google login),
`AnthropicVertex(access_token=…, http_client=…)`, cohere `ClientV2(httpx_client=…)`."""

import asyncio
import json
import ssl
import time

import httpx
import pytest

from tests.support.google_cohere_server import answer, start_google_cohere_server
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
PHONE, SSN = "+1 415 555 0134", "123-45-6789"
TURNS = [f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon.",
         f"{NAME} again: my phone is {PHONE} and my SSN is {SSN}.",
         f"{NAME} here. I work at Initech and I was diagnosed with type 2 diabetes."]
DIRECT = (NAME, EMAIL, PHONE, SSN, "Zarkowsky", "quentin.zarkowsky")


def expected(said: str) -> str:
    """What an unprotected client would read (the SSN is blocked on the way up, so it comes back blocked)."""
    return answer({"message": said.replace(SSN, "[BLOCKED]")})[0]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("gc")
    srv = start_google_cohere_server(d)
    px = start_proxy(d, srv.port)
    ctx = ssl.create_default_context(cafile=str(px.ca))
    http = httpx.Client(proxy=px.url, verify=ctx, timeout=60)
    yield srv, px, http, ctx
    http.close()
    px.stop()
    srv.close()


def wire(srv, since: int) -> str:
    return srv.bodies_text(since)


def assert_protected(srv, since: int, ssn: bool = False) -> None:
    text = wire(srv, since)
    for real in DIRECT:
        assert real not in text, real
    if ssn:
        assert "[BLOCKED]" in text


def genai_client(env, **kw):
    from google import genai
    from google.genai import types

    _, px, http, ctx = env
    opts = types.HttpOptions(httpx_client=http, httpx_async_client=httpx.AsyncClient(proxy=px.url, verify=ctx,
                                                                                     timeout=60))
    return genai.Client(http_options=opts, **kw)


def timed(it):
    """(items, seconds at which the first one arrived)."""
    out, first = [], None
    for x in it:
        first = first or time.time()
        out.append(x)
    return out, first


def test_gemini_chat_json_and_stream_multi_turn(env):
    srv = env[0]
    client = genai_client(env, api_key="AIza-e2e-key")
    n = len(srv.received)
    chat = client.chats.create(model="gemini-2.5-flash")
    r = chat.send_message(TURNS[0])
    assert r.text == expected(TURNS[0]) and f"{NAME}'s details; {NAME.upper()} is on file" in r.text
    chunks, first = timed(chat.send_message_stream(TURNS[1]))
    assert "".join(c.text or "" for c in chunks) == expected(TURNS[1])
    done = srv.finished["/v1beta/models/gemini-2.5-flash:streamGenerateContent"]
    assert len(chunks) > 10 and first < done - 0.3, (first, done)  # the first chunk came long before the last
    r = chat.send_message(TURNS[2])
    assert r.text == expected(TURNS[2])
    assert_protected(srv, n, ssn=True)
    last = srv.received[-1]
    roles = [c["role"] for c in last["contents"]]  # the history went up (the SDK keeps each streamed chunk)
    assert roles[0] == roles[-1] == "user" and roles.count("user") == 3 and roles[1] == "model"
    assert srv.paths[n].startswith("/v1beta/models/gemini-2.5-flash:generateContent")
    assert srv.paths[n + 1].endswith(":streamGenerateContent?alt=sse")
    assert srv.headers[n]["x-goog-api-key"] == "AIza-e2e-key"


def test_gemini_async_generate_content_and_stream(env):
    srv = env[0]
    n = len(srv.received)

    async def main():
        client = genai_client(env, api_key="AIza-e2e-key")
        r = await client.aio.models.generate_content(model="gemini-2.5-flash", contents=TURNS[0])
        out, first = [], None
        async for c in await client.aio.models.generate_content_stream(model="gemini-2.5-flash", contents=TURNS[0]):
            first = first or time.time()
            out.append(c.text or "")
        return r.text, "".join(out), first

    text, streamed, first = asyncio.run(main())
    assert text == streamed == expected(TURNS[0])
    assert first < srv.finished["/v1beta/models/gemini-2.5-flash:streamGenerateContent"] - 0.3
    assert_protected(srv, n)


def _tools():
    from google.genai import types

    decl = types.FunctionDeclaration(name="save_contact", description="save a contact",
                                     parameters=types.Schema(type="OBJECT", properties={
                                         "name": types.Schema(type="STRING"), "email": types.Schema(type="STRING")}))
    return types.GenerateContentConfig(tools=[types.Tool(function_declarations=[decl])])


ARGS = {"name": NAME, "email": EMAIL, "note": f"follow up with {NAME}"}


def test_gemini_function_call_stream(env):
    srv = env[0]
    client = genai_client(env, api_key="AIza-e2e-key")
    n = len(srv.received)
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents=TURNS[0], config=_tools()))
    assert "".join(c.text or "" for c in chunks if c.candidates and c.candidates[0].content.parts and any(
        p.text for p in c.candidates[0].content.parts)) == f"I will save {NAME}."
    calls = [fc for c in chunks for fc in c.function_calls or []]
    assert len(calls) == 1 and calls[0].name == "save_contact" and calls[0].args == ARGS
    assert_protected(srv, n)


def test_gemini_function_call_json(env):
    client = genai_client(env, api_key="AIza-e2e-key")
    r = client.models.generate_content(model="gemini-2.5-flash", contents=TURNS[0], config=_tools())
    assert r.function_calls[0].args == ARGS


def test_vertex_gemini_sdk_with_static_credentials(env):
    from google.oauth2.credentials import Credentials

    srv = env[0]
    client = genai_client(env, vertexai=True, project="my-proj", location="us-central1",
                          credentials=Credentials(token="ya29.e2e-token"))
    n = len(srv.received)
    r = client.models.generate_content(model="gemini-2.5-pro", contents=TURNS[0])
    assert r.text == expected(TURNS[0])
    chunks, first = timed(client.models.generate_content_stream(model="gemini-2.5-pro", contents=TURNS[1]))
    assert "".join(c.text or "" for c in chunks) == expected(TURNS[1])
    base = "/v1beta1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro"
    assert srv.paths[n] == base + ":generateContent" and srv.paths[n + 1] == base + ":streamGenerateContent?alt=sse"
    assert first < srv.finished[base + ":streamGenerateContent"] - 0.3
    assert srv.headers[n]["authorization"] == "Bearer ya29.e2e-token"
    assert_protected(srv, n, ssn=True)


def test_vertex_anthropic_raw_predict(env):
    import anthropic

    srv, _, http, _ = env
    an = anthropic.AnthropicVertex(region="us-east5", project_id="my-proj", access_token="ya29.e2e", http_client=http,
                                   max_retries=0)
    n = len(srv.received)
    m = an.messages.create(model="claude-sonnet-4@20250514", max_tokens=200, messages=[
        {"role": "user", "content": TURNS[0]}])
    assert m.content[0].text == expected(TURNS[0])
    with an.messages.stream(model="claude-sonnet-4@20250514", max_tokens=200,
                            messages=[{"role": "user", "content": TURNS[1]}]) as s:
        text = s.get_final_text()
    assert text == expected(TURNS[1])
    assert srv.paths[n].endswith("/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict")
    assert srv.paths[n + 1].endswith(":streamRawPredict")
    assert_protected(srv, n, ssn=True)


def cohere_v2(env):
    import cohere

    return cohere.ClientV2(api_key="co-e2e-key", base_url="https://api.cohere.com", httpx_client=env[2])


def test_cohere_v2_chat_and_stream_multi_turn(env):
    srv = env[0]
    co = cohere_v2(env)
    n = len(srv.received)
    msgs = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": TURNS[0]}]
    r = co.chat(model="command-a-03-2025", messages=msgs)
    assert r.message.content[0].text == expected(TURNS[0])
    msgs += [{"role": "assistant", "content": r.message.content[0].text}, {"role": "user", "content": TURNS[1]}]
    events, first = timed(co.chat_stream(model="command-a-03-2025", messages=msgs))
    text = "".join(e.delta.message.content.text for e in events if e.type == "content-delta")
    assert text == expected(TURNS[1]) and events[-1].type == "message-end"
    assert first < srv.finished["/v2/chat"] - 0.3
    msgs += [{"role": "assistant", "content": text}, {"role": "user", "content": TURNS[2]}]
    r = co.chat(model="command-a-03-2025", messages=msgs)
    assert r.message.content[0].text == expected(TURNS[2])
    assert_protected(srv, n, ssn=True)
    assert srv.headers[n]["authorization"] == "Bearer co-e2e-key"


def test_cohere_v2_tool_calls_json_and_stream(env):
    srv = env[0]
    co = cohere_v2(env)
    n = len(srv.received)
    tools = [{"type": "function", "function": {"name": "save_contact", "description": "save a contact",
                                               "parameters": {"type": "object", "properties": {}}}}]
    msgs = [{"role": "user", "content": TURNS[0]}]
    r = co.chat(model="command-a-03-2025", messages=msgs, tools=tools)
    assert json.loads(r.message.tool_calls[0].function.arguments) == ARGS
    assert r.message.tool_plan == f"I will save the contact of {NAME}."
    plan, args = "", ""
    for e in co.chat_stream(model="command-a-03-2025", messages=msgs, tools=tools):
        if e.type == "tool-plan-delta":
            plan += e.delta.message.tool_plan
        elif e.type in ("tool-call-start", "tool-call-delta"):
            args += e.delta.message.tool_calls.function.arguments or ""
    assert plan == f"I will save the contact of {NAME}." and json.loads(args) == ARGS
    msgs += [{"role": "assistant", "tool_plan": plan, "tool_calls": [
        {"id": "call_c1", "type": "function", "function": {"name": "save_contact", "arguments": args}}]},
        {"role": "tool", "tool_call_id": "call_c1", "content": [{"type": "text", "text": f"saved {EMAIL}"}]}]
    co.chat(model="command-a-03-2025", messages=msgs)  # the de-masked call goes back up pseudonymised
    assert_protected(srv, n)


def test_cohere_v1_chat_stream_ndjson(env):
    import cohere

    srv, _, http, _ = env
    co = cohere.Client(api_key="co-e2e-key", base_url="https://api.cohere.com", httpx_client=http)
    n = len(srv.received)
    events = list(co.chat_stream(message=TURNS[0], preamble="Be kind.", model="command-r-plus"))
    text = "".join(e.text for e in events if e.event_type == "text-generation")
    assert text == expected(TURNS[0]) and events[-1].event_type == "stream-end"
    assert events[-1].response.text == text
    assert srv.paths[n] == "/v1/chat"
    assert_protected(srv, n)


def test_no_403_for_an_ssn_and_raw_vertex_path(env):
    srv, _, http, _ = env
    n = len(srv.received)
    r = http.post("https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/"
                  "google/models/gemini-2.0-flash:generateContent",
                  json={"contents": [{"role": "user", "parts": [{"text": TURNS[1]}]}]},
                  headers={"authorization": "Bearer ya29.raw"})
    assert r.status_code == 200
    assert r.json()["candidates"][0]["content"]["parts"][0]["text"] == expected(TURNS[1])
    assert_protected(srv, n, ssn=True)
