"""End to end: the real `openai` and `anthropic` SDKs, streaming and not, through a real `guardian-proxy run`
(HTTPS, mitmproxy CA) to a local OpenAI/Anthropic-compatible server (tests/support/llm_server.py) that
records what it receives and answers naming the person it was told about."""

import json
import re
import ssl

import httpx
import pytest

from tests.support.llm_server import start_llm_server
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
INTRO = f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon."


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("chat")
    srv = start_llm_server(d, ["api.openai.com", "api.anthropic.com", "ollama.example", "api.together.xyz"])
    px = start_proxy(d, srv.port)
    http = httpx.Client(proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), timeout=60)
    yield srv, px, http, d, {}
    http.close()
    px.stop()
    srv.close()


def openai_client(env):
    import openai

    return openai.OpenAI(api_key="sk-e2e", base_url="https://api.openai.com/v1", http_client=env[2], max_retries=0)


def surrogate_of(srv, real_sentence_start: str, n: int = -1) -> str:
    """The surrogate the server received for NAME, from the last request's first user message."""
    body = srv.received[n]
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
    m = re.match(re.escape(real_sentence_start) + r"(.+?) \(", content)
    return m.group(1)


def test_openai_sdk_json_then_stream_then_tools(env):
    srv, px, _, _, _ = env
    oa = openai_client(env)
    n = len(srv.received)
    msgs = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": INTRO}]
    r = oa.chat.completions.create(model="gpt-4o", messages=msgs)
    reply = r.choices[0].message.content
    assert f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file." in reply
    assert reply.endswith(f"You said: {INTRO}")
    assert NAME not in srv.bodies_text(n) and EMAIL not in srv.bodies_text(n)
    sur = surrogate_of(srv, "Hi, I'm ")
    assert sur != NAME and len(sur.split()) == 2
    env[4]["surrogate"] = sur

    msgs += [{"role": "assistant", "content": reply},
             {"role": "user", "content": f"It's {NAME} again. Quentin earns $85,000 and has asthma."}]
    chunks = list(oa.chat.completions.create(model="gpt-4o", messages=msgs, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith(f"Noted, {NAME}.") and text.endswith("Quentin earns $85,000 and has asthma.")
    wire = srv.bodies_text(n + 1)
    assert surrogate_of(srv, "Hi, I'm ") == sur  # the same surrogate, turn after turn
    for real in (NAME, EMAIL, "Zarkowsky", "Quentin"):  # past τ: history rewritten
        assert real not in wire, real
    # the condition and the amount the question is about stay (session.keep_after_tau)
    assert "has asthma" in wire and "$85,000" in wire
    assert "a week in Lisbon" in wire  # the city the request is about stays (session/context.py rule 6)

    tools = [{"type": "function", "function": {"name": "save_contact", "parameters": {"type": "object"}}}]
    for stream in (False, True):
        if stream:
            args = "".join(tc.function.arguments or "" for c in oa.chat.completions.create(
                model="gpt-4o", messages=msgs, tools=tools, stream=True) if c.choices
                for tc in c.choices[0].delta.tool_calls or [])
        else:
            args = oa.chat.completions.create(model="gpt-4o", messages=msgs, tools=tools
                                              ).choices[0].message.tool_calls[0].function.arguments
        assert json.loads(args)["name"] == NAME and json.loads(args)["note"] == f"follow up with {NAME}"


def test_gzip_stream_and_responses_api(env):
    srv, _, _, _, _ = env
    oa = openai_client(env)
    msgs = [{"role": "user", "content": f"Hello, I am {NAME}. Please greet me."}]
    stream = oa.chat.completions.create(model="gpt-4o", messages=msgs, stream=True,
                                        extra_headers={"x-test-gzip": "1"})
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == (f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. "
                    f"You said: Hello, I am {NAME}. Please greet me.")
    n = len(srv.received)
    r = oa.responses.create(model="gpt-4o", input=f"I am {NAME}, remember me.")
    assert r.output_text.startswith(f"Noted, {NAME}.")
    with oa.responses.stream(model="gpt-4o", input=f"I am {NAME}, remember me.", previous_response_id=r.id) as s:
        final = s.get_final_response()
    assert final.output_text.endswith(f"You said: I am {NAME}, remember me.")
    assert NAME not in srv.bodies_text(n)


def test_anthropic_sdk_json_and_stream(env):
    import anthropic

    srv, _, http, _, _ = env
    an = anthropic.Anthropic(api_key="sk-ant-e2e", base_url="https://api.anthropic.com", http_client=http,
                             max_retries=0)
    n = len(srv.received)
    msgs = [{"role": "user", "content": INTRO}]
    m = an.messages.create(model="claude-x", max_tokens=200, system="Be kind.", messages=msgs)
    assert m.content[0].text.endswith(f"You said: {INTRO}") and f"{NAME}'s details" in m.content[0].text
    msgs += [{"role": "assistant", "content": m.content[0].text}, {"role": "user", "content": f"Thanks, {NAME}."}]
    with an.messages.stream(model="claude-x", max_tokens=200, messages=msgs) as s:
        text = s.get_final_text()
    assert text == f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: Thanks, {NAME}."
    assert NAME not in srv.bodies_text(n) and EMAIL not in srv.bodies_text(n)
    assert srv.paths[-1] == "/v1/messages"


def test_ollama_ndjson_stream(env):
    srv, _, http, _, _ = env
    n = len(srv.received)
    with http.stream("POST", "https://ollama.example/api/chat",
                     json={"model": "llama3", "messages": [{"role": "user", "content": f"I am {NAME}."}]}) as r:
        lines = [json.loads(x) for x in r.iter_lines() if x]
    assert "".join(x["message"]["content"] for x in lines).endswith(f"You said: I am {NAME}.")
    assert NAME not in srv.bodies_text(n)


def test_together_text_completions_stream_is_demasked_whole(env):
    """Together's OpenAI-compatible Completions (`/v1/completions`, streamed `choices[].text`) had no
    dialect: the generic one de-masks event by event and left half a surrogate. The server cuts its answer into
    3–5 character pieces, so every surrogate is split across chunks."""
    srv, _, http, _, _ = env
    n = len(srv.received)
    prompt = f"Write a short note to {NAME} ({EMAIL}) about the trip."
    with http.stream("POST", "https://api.together.xyz/v1/completions",
                     json={"model": "mistralai/Mixtral-8x7B-v0.1", "prompt": prompt, "stream": True}) as r:
        raw = b"".join(r.iter_bytes())
    events = [json.loads(x[6:]) for x in raw.decode().split("\n\n") if x.startswith("data: {")]
    text = "".join(c["text"] for e in events for c in e["choices"])
    assert text == f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: {prompt}"
    assert raw.rstrip().endswith(b"data: [DONE]")
    assert srv.paths[-1] == "/v1/completions" and NAME not in srv.bodies_text(n) and EMAIL not in srv.bodies_text(n)
    r = http.post("https://api.together.xyz/v1/completions", json={"model": "m", "prompt": prompt})
    assert r.json()["choices"][0]["text"].endswith(f"You said: {prompt}")


def test_together_chat_stream_text_copy_is_demasked(env):
    """Together's chat stream repeats each piece as `choices[].text`; that copy kept the surrogates."""
    srv, _, http, _, _ = env
    n = len(srv.received)
    said = f"Hello, I am {NAME}. Please greet me."
    with http.stream("POST", "https://api.together.xyz/v1/chat/completions",
                     json={"model": "meta-llama/Llama-3-8b-chat-hf", "stream": True,
                           "messages": [{"role": "user", "content": said}]}) as r:
        raw = b"".join(r.iter_bytes())
    events = [json.loads(x[6:]) for x in raw.decode().split("\n\n") if x.startswith("data: {")]
    content = "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])
    copy = "".join(c.get("text") or "" for e in events for c in e["choices"])
    assert content == copy == f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: {said}"
    assert NAME not in srv.bodies_text(n)


def test_anthropic_legacy_complete_stream_is_demasked_whole(env):
    """Anthropic's legacy `/v1/complete` fell to the generic dialect ("Michelle Doorwright": half a
    surrogate left in the reply); its `completion` events are now deltas of one text."""
    srv, _, http, _, _ = env
    n = len(srv.received)
    prompt = f"\n\nHuman: Hello, I am {NAME}. Please greet me.\n\nAssistant:"
    with http.stream("POST", "https://api.anthropic.com/v1/complete", headers={"anthropic-version": "2023-06-01"},
                     json={"model": "claude-2.1", "prompt": prompt, "max_tokens_to_sample": 300, "stream": True}) as r:
        raw = b"".join(r.iter_bytes())
    events = [json.loads(x.split("data: ", 1)[1]) for x in raw.decode().split("\n\n") if "data: {" in x]
    text = "".join(e["completion"] for e in events if e.get("type") == "completion")
    said = f"Hello, I am {NAME}. Please greet me."
    assert text == f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: {said}"
    assert events[-1]["stop_reason"] == "stop_sequence"
    sent = srv.received[-1]["prompt"]
    assert NAME not in srv.bodies_text(n) and sent.startswith("\n\nHuman: Hello, I am ") and sent.endswith(
        "\n\nAssistant:")  # the transcript's markers are left as they are


def test_log_lines_and_restart_keeps_the_mapping(env):
    import openai

    srv, px, _, d, seen = env
    lines = [x for x in px.log_lines() if x.get("rule") == "chat-session"]
    assert lines and all({"session", "turn", "cpe", "retroactive", "counts"} <= set(x) for x in lines)
    assert any(x["retroactive"] for x in lines) and any(x["counts"].get("PERSON") for x in lines)
    raw = px.log_path.read_text()
    assert NAME not in raw and EMAIL not in raw and "Zarkowsky" not in raw
    px.stop()
    (d / "again").mkdir()
    px2 = start_proxy(d / "again", srv.port, extra=["--state-dir", str(px.state_dir)])
    try:
        http2 = httpx.Client(proxy=px2.url, verify=ssl.create_default_context(cafile=str(px2.ca)), timeout=60)
        oa = openai.OpenAI(api_key="sk-e2e", base_url="https://api.openai.com/v1", http_client=http2, max_retries=0)
        msgs = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": INTRO}]
        r = oa.chat.completions.create(model="gpt-4o", messages=msgs)  # the conversation started before the restart
        assert surrogate_of(srv, "Hi, I'm ") == seen["surrogate"]
        assert r.choices[0].message.content.endswith(f"You said: {INTRO}")
        http2.close()
    finally:
        px2.stop()
