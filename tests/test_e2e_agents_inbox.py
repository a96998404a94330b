"""End to end (docs/design/agents.md, item by item): an agent asked to e-mail a colleague a summary of an
inbox that holds a meeting-room change, a roster and a friend's cancer diagnosis, through a real
`guardian-proxy run` (cdi+guard) to a worst-case agent that copies everything it read into `send_email`. Real
clients: openai (JSON and stream), anthropic (JSON and stream), mistralai (JSON and stream) and litellm; the
inbox as JSON objects and as a text listing. Before the fix the text listing was one record, withheld whole,
and the body lost the room change and the roster too."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.agent_server import start_agent_server
from tests.support.proxy_process import start_proxy
from tests.unit.agents.test_items import NEWS, ROOM, ROSTER, SHAPES

pytestmark = pytest.mark.slow

INSTR = "Please email my colleague Dana (dana@acme.example) a short summary of what is in my inbox."
TOOLS = [{"type": "function", "function": {"name": "send_email", "parameters": {"type": "object"}}}]
SHAPE_IDS = ["json", "text"]


def messages(shape: str) -> list[dict]:
    return [{"role": "user", "content": INSTR},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_inbox", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": SHAPES[shape]}]


def anthropic_messages(shape: str) -> list[dict]:
    return [{"role": "user", "content": INSTR},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_inbox", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": SHAPES[shape]}]}]


def check(args: dict | str) -> None:
    args = json.loads(args) if isinstance(args, str) else args  # valid JSON
    body = args["body"]
    # the session stage pseudonymised the days before the agent saw them; the reply is de-masked: verbatim again
    assert ROOM in body and ROSTER in body, body
    assert "cancer" not in body and "chemotherapy" not in body and NEWS[:30] not in body, body
    assert args["to"] == "dana@acme.example"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("inbox")
    cfg = d / "config.yaml"
    cfg.write_text("agents:\n  mode: cdi+guard\n")
    srv = start_agent_server()
    px = start_proxy(d, srv.port, extra=["--config", str(cfg), "--dashboard-port", "0"])
    http = httpx.Client(proxy=px.url, timeout=120)
    yield srv, px, http
    http.close()
    px.stop()
    srv.close()


@pytest.mark.parametrize("shape", SHAPE_IDS)
def test_openai_json_and_stream(env, shape):
    import openai

    client = openai.OpenAI(api_key="sk-agent", base_url="http://api.openai.com/v1", http_client=env[2], max_retries=0)
    r = client.chat.completions.create(model="agent", messages=messages(shape), tools=TOOLS)
    check(r.choices[0].message.tool_calls[0].function.arguments)
    args = ""
    for chunk in client.chat.completions.create(model="agent", messages=messages(shape), tools=TOOLS, stream=True):
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            args += (tc.function.arguments or "") if tc.function else ""
    check(args)
    line = [x for x in env[1].log_lines() if x.get("agent")][-1]
    assert line["agent"]["withhold"] >= 1 and line["agent"]["shareable"] >= 4


@pytest.mark.parametrize("shape", SHAPE_IDS)
def test_anthropic_json_and_stream(env, shape):
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant", base_url="http://api.anthropic.com", http_client=env[2],
                                 max_retries=0)
    kw = {"model": "agent", "max_tokens": 100, "messages": anthropic_messages(shape),
          "tools": [{"name": "send_email", "input_schema": {"type": "object"}}]}
    msg = client.messages.create(**kw)
    check(next(b for b in msg.content if b.type == "tool_use").input)
    with client.messages.stream(**kw) as s:
        final = s.get_final_message()
    check(next(b for b in final.content if b.type == "tool_use").input)


@pytest.mark.parametrize("shape", SHAPE_IDS)
def test_mistralai_json_and_stream(env, shape):
    from mistralai import Mistral

    m = Mistral(api_key="e2e", server_url="http://api.mistral.ai", client=env[2])
    r = m.chat.complete(model="mistral-small-latest", messages=messages(shape), tools=TOOLS)
    check(r.choices[0].message.tool_calls[0].function.arguments)
    args = ""
    for ev in m.chat.stream(model="mistral-small-latest", messages=messages(shape), tools=TOOLS):
        for tc in (ev.data.choices[0].delta.tool_calls or []) if ev.data.choices else []:
            args += tc.function.arguments if isinstance(tc.function.arguments, str) else ""
    check(args)


def test_litellm(env):
    import litellm

    litellm.client_session = env[2]
    try:
        r = litellm.completion(model="openai/agent", api_base="http://api.openai.com/v1", api_key="sk-agent",
                               messages=messages("text"), tools=TOOLS)
        check(r.choices[0].message.tool_calls[0].function.arguments)
    finally:
        litellm.client_session = None
