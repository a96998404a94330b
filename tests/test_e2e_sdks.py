"""End to end: more real client libraries through a real `guardian-proxy run` to the local chat server
(tests/support/llm_server.py, OpenAI/Ollama framing): mistralai (sync and async, JSON and stream), the
official ollama client (chat, stream) and litellm (OpenAI provider, JSON and stream). In every case no raw
name or e-mail reaches the server and the client reads them back, as if unprotected."""

from __future__ import annotations

import asyncio
import ssl

import httpx
import pytest

from tests.support.llm_server import start_llm_server
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

NAME, EMAIL = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com"
SAID = f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon."
ANSWER = f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: {SAID}"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("sdks")
    srv = start_llm_server(d, ["api.mistral.ai", "ollama.example", "api.openai.com"])
    px = start_proxy(d, srv.port)
    ctx = ssl.create_default_context(cafile=str(px.ca))
    yield srv, px, ctx
    px.stop()
    srv.close()


def clean(srv, n: int) -> None:
    wire = srv.bodies_text(n)
    assert len(srv.received) > n
    assert NAME not in wire and EMAIL not in wire and "Zarkowsky" not in wire


def test_mistralai_sync_and_async(env):
    from mistralai import Mistral

    srv, px, ctx = env
    msgs = [{"role": "user", "content": SAID}]
    n = len(srv.received)
    with httpx.Client(proxy=px.url, verify=ctx, timeout=60) as http:
        m = Mistral(api_key="e2e", server_url="https://api.mistral.ai", client=http)
        r = m.chat.complete(model="mistral-small-latest", messages=msgs)
        assert r.choices[0].message.content == ANSWER
        text = "".join(ev.data.choices[0].delta.content or "" for ev in
                       m.chat.stream(model="mistral-small-latest", messages=msgs) if ev.data.choices)
        assert text == ANSWER
    clean(srv, n)

    async def run():
        async with httpx.AsyncClient(proxy=px.url, verify=ctx, timeout=60) as ah:
            m = Mistral(api_key="e2e", server_url="https://api.mistral.ai", async_client=ah)
            r = await m.chat.complete_async(model="mistral-small-latest", messages=msgs)
            return r.choices[0].message.content

    n = len(srv.received)
    assert asyncio.run(run()) == ANSWER
    clean(srv, n)


def test_ollama_client_chat_and_stream(env):
    import ollama

    srv, px, ctx = env
    c = ollama.Client(host="https://ollama.example", proxy=px.url, verify=ctx, timeout=60)
    n = len(srv.received)
    r = c.chat(model="llama3", messages=[{"role": "user", "content": SAID}], stream=False)
    assert r.message.content == ANSWER
    parts = [p.message.content for p in c.chat(model="llama3", messages=[{"role": "user", "content": SAID}],
                                               stream=True)]
    assert len(parts) > 5 and "".join(parts) == ANSWER
    clean(srv, n)


def test_litellm_openai_provider(env):
    import litellm

    srv, px, ctx = env
    litellm.client_session = httpx.Client(proxy=px.url, verify=ctx, timeout=60)
    try:
        n = len(srv.received)
        kw = {"model": "openai/gpt-4o", "api_base": "https://api.openai.com/v1", "api_key": "sk-e2e",
              "messages": [{"role": "user", "content": SAID}]}
        r = litellm.completion(**kw)
        assert r.choices[0].message.content == ANSWER
        text = "".join(c.choices[0].delta.content or "" for c in litellm.completion(**kw, stream=True))
        assert text == ANSWER
        clean(srv, n)
    finally:
        litellm.client_session.close()
        litellm.client_session = None
