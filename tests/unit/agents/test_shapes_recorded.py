"""Guidance goes where each provider's API takes instructions, checked on every recorded agent step of the
AI-API cassettes in ../shared/data/realtraffic (OpenAI, Anthropic, Gemini, Bedrock, Ollama, OpenRouter …; read at
test time, never copied here): after `inject`, the message list still ends with what the client sent (no
trailing `system` message, which api.mistral.ai rejects with 400 "Expected last role User or Tool"), system
messages only lead, and the guidance sits in the API's instruction field."""

import gzip
import json
from pathlib import Path

import pytest

from guardian_proxy import chatapi
from guardian_proxy.agents.shapes import inject
from guardian_proxy.agents.step import detect

CASSETTES = Path(__file__).resolve().parents[4] / "shared" / "data" / "realtraffic" / "cassettes"
G = "Privacy guidance for your next action (test)."


def recorded_steps():
    yaml = pytest.importorskip("yaml")
    out = []
    for f in sorted(CASSETTES.glob("*/*.yaml*")):
        opener = gzip.open if f.name.endswith(".gz") else open
        with opener(f, "rt") as fh:
            cas = yaml.safe_load(fh)
        for k, it in enumerate(cas.get("interactions") or []):
            rq = it.get("request") or {}
            body = rq.get("body")
            body = body.get("string") if isinstance(body, dict) else body
            if not isinstance(body, str | bytes) or not body:
                continue
            from urllib.parse import urlsplit

            u = urlsplit(rq.get("uri", ""))
            raw = body.encode() if isinstance(body, str) else body
            chat = chatapi.recognise_body(u.hostname or "", u.path, raw, "application/json")
            if chat is None:
                continue
            step = detect(chat.kind, chat.data)
            if step is not None and step.latest_is_tool_result:
                out.append((f"{f.parent.name}/{f.name}#{k}", chat.kind, json.loads(raw)))
    return out


@pytest.mark.skipif(not CASSETTES.is_dir(), reason="../shared/data/realtraffic is not present")
def test_guidance_goes_into_the_instruction_field_of_every_recorded_agent_step():
    steps = recorded_steps()
    assert len(steps) >= 10 and len({k for _, k, _ in steps}) >= 3  # several APIs' shapes
    for name, kind, data in steps:
        before = json.loads(json.dumps(data))
        assert inject(kind, data, G), (name, kind)
        msgs = data.get("messages")
        if isinstance(msgs, list):
            assert msgs[-1] == before["messages"][-1], name  # the last message is still the client's
            assert msgs[-len(before["messages"]):][1:] == before["messages"][1:], name  # nothing added after
        if kind == "openai_responses":
            assert data["instructions"].endswith(G) and data["input"] == before["input"], name
        elif kind in ("gemini", "vertex_gemini"):
            si = data.get("systemInstruction") or data.get("system_instruction")
            assert si["parts"][-1] == {"text": G} and data["contents"] == before["contents"], name
        elif kind in ("anthropic", "bedrock_anthropic", "vertex_anthropic"):
            system = data["system"]
            assert (system[-1]["text"] if isinstance(system, list) else system).endswith(G), name
            assert data["messages"] == before["messages"], name
        elif kind == "bedrock_converse":
            assert data["system"][-1] == {"text": G} and data["messages"] == before["messages"], name
        else:  # message lists: the leading system message
            assert msgs[0]["role"] in ("system", "developer") and G in json.dumps(msgs[0]), name
