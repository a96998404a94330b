"""End to end: agent steps through a real `guardian-proxy run` to a worst-case agent that copies everything
it read into its next tool call; real clients (the openai and anthropic SDKs, streaming and not)."""

import json

import httpx
import pytest

from guardian_proxy.agents import ExperienceLog
from tests.support.agent_server import start_agent_server
from tests.support.proxy_process import start_proxy
from tests.test_agents import INSTR, OBS

pytestmark = pytest.mark.slow

TOOLS = [{"type": "function", "function": {"name": "send_email", "parameters": {"type": "object"}}}]


def messages():
    return [{"role": "user", "content": INSTR},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "notion_search", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": OBS}]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("agents")
    cfg = d / "config.yaml"
    cfg.write_text("agents:\n  mode: cdi+guard\n  hosts:\n    llm.internal.example: 'off'\n")
    srv = start_agent_server()
    px = start_proxy(d, srv.port, extra=["--config", str(cfg), "--dashboard-port", "0"])
    http = httpx.Client(proxy=px.url, timeout=60)
    yield srv, px, http
    http.close()
    px.stop()
    srv.close()


def _openai(env, host="api.openai.com"):
    import openai

    return openai.OpenAI(api_key="sk-agent", base_url=f"http://{host}/v1", http_client=env[2], max_retries=0)


def test_guidance_is_injected_and_json_tool_call_is_guarded(env):
    srv, px, _ = env
    r = _openai(env).chat.completions.create(model="agent", messages=messages(), tools=TOOLS)
    sent = srv.received[-1]["messages"]
    # in the leading system message, never after the tool results (the server, like api.mistral.ai, rejects that)
    assert sent[0]["role"] == "system" and "Do NOT include" in sent[0]["content"] and sent[-1]["role"] == "tool"
    withhold, share = sent[0]["content"].split("You may use")
    assert "diagnosed with" in withhold  # the guidance names what to withhold (in the session's pseudonyms) …
    assert "Offsite planning" in share and "design review" in share  # … and what is fine to share
    assert "chemotherapy" not in json.dumps(srv.received[-1])  # the session stage already pseudonymised it
    args = json.loads(r.choices[0].message.tool_calls[0].function.arguments)
    assert "chemotherapy" not in args["body"] and "cancer" not in args["body"]
    assert "Lakeside venue" in args["body"] and args["to"] == "mark@acme.example"
    line = [x for x in px.log_lines() if x.get("agent")][-1]
    assert line["agent"]["mode"] == "cdi+guard" and line["agent"]["withhold"] >= 1


def test_streamed_tool_call_is_guarded(env):
    stream = _openai(env).chat.completions.create(model="agent", messages=messages(), tools=TOOLS, stream=True)
    args = ""
    for chunk in stream:
        for tc in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            args += (tc.function.arguments or "") if tc.function else ""
    body = json.loads(args)["body"]
    assert "chemotherapy" not in body and "Lakeside venue" in body


def test_anthropic_sdk_stream_guarded(env):
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant", base_url="http://api.anthropic.com", http_client=env[2],
                                 max_retries=0)
    msgs = [{"role": "user", "content": INSTR},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "notion_search", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": OBS}]}]
    with client.messages.stream(model="agent", max_tokens=100, messages=msgs,
                                tools=[{"name": "send_email", "input_schema": {"type": "object"}}]) as s:
        final = s.get_final_message()
    block = next(b for b in final.content if b.type == "tool_use")
    assert "chemotherapy" not in block.input["body"] and "Lakeside venue" in block.input["body"]
    assert "Do NOT include" in env[0].received[-1]["system"]


def test_mode_off_per_host_and_experience_log(env):
    srv, px, _ = env
    r = _openai(env, "llm.internal.example").chat.completions.create(model="agent", messages=messages(), tools=TOOLS)
    assert [m["role"] for m in srv.received[-1]["messages"]] == ["user", "assistant", "tool"]  # nothing injected
    assert "chemotherapy" in json.loads(r.choices[0].message.tool_calls[0].function.arguments)["body"]
    cases = ExperienceLog(px.state_dir / "experience").cases()
    assert cases and cases[0]["leaking_action"]["tool"] == "send_email" and cases[0]["removed"] >= 1
    raw = (px.state_dir / "experience" / "cases.jsonl.enc").read_bytes()
    assert b"chemotherapy" not in raw  # encrypted at rest


def test_mistral_shaped_request_with_a_system_prompt_is_accepted(env):
    """Guidance appended as a `system` message after the tool results made api.mistral.ai answer 400
    ("Expected last role User or Tool"); it now goes into the leading system message the request already has."""
    srv, _, http = env
    msgs = [{"role": "system", "content": "You are an office assistant."}] + messages()
    r = http.post("http://api.mistral.ai/v1/chat/completions", json={"model": "mistral-small-latest",
                                                                       "messages": msgs, "tools": TOOLS})
    assert r.status_code == 200, r.text
    sent = srv.received[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[0]["content"].startswith("You are an office assistant.\n\n") and "Do NOT include" in sent[0]["content"]
