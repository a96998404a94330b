"""Agents (CDI): norms, items, step detection, instructor, guard (JSON and streamed), injection."""

import json

import pytest

from guardian_proxy.agents import Guard, Instructor, Norms, default_norms, detect_step
from guardian_proxy.agents.items import containment, content_words, items_of, sentences
from guardian_proxy.agents.shapes import PROMPT, inject, tool_calls
from guardian_proxy.agents.stream import StreamGuard
from guardian_proxy.errors import ConfigError
from guardian_proxy.session.reply import Streamed

OBS = json.dumps({"results": [
    {"id": "n1", "title": "Offsite planning", "content": "The team offsite is on March 3 at the Lakeside venue. "
     "The agenda covers the Q2 roadmap and a design review."},
    {"id": "n2", "title": "Note about Emily Carter", "content": "Emily Carter told me she was diagnosed with breast "
     "cancer and starts chemotherapy next week. She asked me to keep it private."}]})
INSTR = "Email my coworker Mark (mark@acme.example) a summary of the offsite plans. You can check my Notion."
COPY = ("Offsite planning\nThe team offsite is on March 3 at the Lakeside venue. The agenda covers the Q2 roadmap and "
        "a design review.\nEmily Carter told me she was diagnosed with breast cancer and starts chemotherapy next week.")


def openai_request(obs=OBS, instr=INSTR):
    return {"model": "m", "tools": [{"type": "function", "function": {"name": "send_email", "parameters": {}}}],
            "messages": [{"role": "user", "content": instr},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c1", "type": "function", "function": {"name": "notion_search", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": obs}]}


@pytest.fixture(scope="module")
def guidance():
    ins = Instructor(default_norms())
    return ins, ins.guide(detect_step("openai_chat", openai_request()))


def test_norms_table_validates_and_rejects_bad_files(tmp_path):
    n = default_norms()
    assert "health" in n.spec.data_types and n.spec.allow["health"] == ["health_care"]
    bad = tmp_path / "n.yaml"
    bad.write_text("version: 1\nthreshold: 1\npersonal_threshold: 0.5\ndata_types: {}\nrelationships: {}\n"
                   "allow: {nope: []}\nown_data: {}\n")
    with pytest.raises(ConfigError):
        Norms.load(bad)


def test_classify_personal_versus_general():
    n = default_norms()
    about = n.classify("Emily was diagnosed with cancer.", persons=1)
    general = n.classify("New therapy methods improve outcomes in mental health care.")
    assert n.withhold(about, "coworker") == ["health"]
    assert n.withhold(general, "coworker") == []  # impersonal knowledge is shareable
    assert n.withhold(about, "health_care") == []  # the norm allows health information to a doctor
    assert n.withhold(n.classify("My SSN is 123-45-6789"), "public") == ["identifiers"]


def test_relationship_from_instruction_and_tool():
    n = default_norms()
    assert n.relationship(INSTR) == "coworker"
    assert n.relationship("Tell my husband about dinner") == "intimate"
    assert n.relationship("anything", tool="FacebookManagerCreatePost") == "public"
    assert n.relationship("Send it to Bob") == "unknown"


def test_items_sentences_and_containment():
    assert sentences("Mr. Smith met Dr. Jones. They talked.") == ["Mr. Smith met Dr. Jones.", "They talked."]
    its = items_of("t", OBS)
    assert [i.text for i in its][:2] == ["Offsite planning", "The team offsite is on March 3 at the Lakeside venue."]
    assert all("n1" not in i.text for i in its)  # identifiers are not information items
    assert items_of("t", "plain text. Two sentences.")[1].text == "Two sentences."
    assert containment("breast cancer chemotherapy", content_words("she has breast cancer")) == pytest.approx(2 / 3)


@pytest.mark.parametrize("kind,data", [
    ("openai_chat", openai_request()),
    ("anthropic", {"tools": [{"name": "send_email"}], "messages": [
        {"role": "user", "content": INSTR},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "notion_search", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": OBS}]}]}),
    ("openai_responses", {"tools": [{"type": "function", "name": "send_email"}], "input": [
        {"role": "user", "content": INSTR},
        {"type": "function_call", "call_id": "k", "name": "notion_search", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "k", "output": OBS}]}),
])
def test_step_detection_per_api(kind, data):
    step = detect_step(kind, data)
    assert step.latest_is_tool_result and step.results[0].tool == "notion_search" and "offsite" in step.instruction
    assert step.results[0].text == OBS


def test_no_step_without_tools_or_results():
    assert detect_step("openai_chat", {"messages": [{"role": "user", "content": "hi"}]}) is None
    data = openai_request()
    data["messages"] = data["messages"][:1]
    assert detect_step("openai_chat", data) is None


def test_guidance_names_what_to_withhold_and_what_to_share(guidance):
    _, g = guidance
    assert g.relationship == "coworker"
    assert any("chemotherapy" in j.item.text for j in g.withhold)
    assert any("Lakeside" in j.item.text for j in g.share)
    assert "Do NOT include" in g.text and "You may use" in g.text and "chemotherapy" in g.text


def test_guard_removes_leaking_sentences_only(guidance):
    ins, g = guidance
    res = Guard(ins).check_call("send_email", json.dumps({"to": "mark@acme.example", "body": COPY}), g)
    args = json.loads(res.arguments)
    assert args["to"] == "mark@acme.example"  # addressing keys are never rewritten
    assert "chemotherapy" not in args["body"] and "Lakeside venue" in args["body"]
    assert res.removed == 1 and not res.blocked and "health" in res.types
    # a paraphrase is caught by the norms even if it matches no observed sentence
    res = Guard(ins).check_call("send_email", json.dumps({"body": "FYI Emily Carter has cancer treatment soon."}), g)
    assert res.blocked and json.loads(res.arguments)["body"] == ""
    # malformed JSON arguments are checked as one text (stated rule)
    res = Guard(ins).check_call("send_email", "not json: " + COPY, g)
    assert "chemotherapy" not in res.arguments


def test_inject_per_api():
    # never a trailing `system` message after the tool results (api.mistral.ai answers 400 "Expected
    # last role User or Tool"): the guidance goes first, or into the leading system message
    d = openai_request()
    assert inject("openai_chat", d, "G") and d["messages"][0] == {"role": "system", "content": "G"}
    assert d["messages"][-1]["role"] == "tool"
    d = openai_request()
    d["messages"].insert(0, {"role": "system", "content": "You are a mail agent."})
    assert inject("openai_chat", d, "G") and d["messages"][0]["content"] == "You are a mail agent.\n\nG"
    assert [m["role"] for m in d["messages"]] == ["system", "user", "assistant", "tool"]
    d = openai_request()
    d["messages"].insert(0, {"role": "developer", "content": [{"type": "text", "text": "x"}]})
    assert inject("ollama_chat", d, "G") and d["messages"][0]["content"][-1] == {"type": "text", "text": "G"}
    g = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert inject("gemini", g, "G") and g["systemInstruction"] == {"parts": [{"text": "G"}]}
    g = {"contents": [], "system_instruction": {"parts": [{"text": "s"}]}}
    assert inject("vertex_gemini", g, "G") and g["system_instruction"]["parts"][-1] == {"text": "G"}
    c = {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "system": [{"text": "s"}]}
    assert inject("bedrock_converse", c, "G") and c["system"] == [{"text": "s"}, {"text": "G"}]
    assert c["messages"][-1]["role"] == "user"
    v1 = {"message": "hi"}
    assert inject("cohere_v1", v1, "G") and v1["preamble"] == "G"
    r = {"input": [{"role": "user", "content": "hi"}], "instructions": "be brief"}
    assert inject("openai_responses", r, "G") and r["instructions"] == "be brief\n\nG" and len(r["input"]) == 1
    a = {"messages": [], "system": "be nice"}
    assert inject("anthropic", a, "G") and a["system"] == "be nice\n\nG"
    a = {"messages": [], "system": [{"type": "text", "text": "x"}]}
    assert inject("anthropic", a, PROMPT) and a["system"][-1]["text"] == PROMPT
    r = {"input": "hello"}
    assert inject("openai_responses", r, "G") and r["instructions"] == "G"
    assert not inject("ollama_generate", {"prompt": "x"}, "G")


def test_tool_calls_setters_per_api():
    oa = {"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}}]}
    an = {"content": [{"type": "tool_use", "name": "f", "input": {"a": 1}}]}
    ol = {"message": {"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}}
    for kind, data in (("openai_chat", oa), ("anthropic", an), ("ollama_chat", ol)):
        [(name, args, put)] = list(tool_calls(kind, data))
        assert name == "f" and json.loads(args) == {"a": 1}
        put('{"a": 2}')
    assert oa["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"a": 2}'
    assert an["content"][0]["input"] == {"a": 2} and ol["message"]["tool_calls"][0]["function"]["arguments"] == {"a": 2}


def _openai_stream(args: str, size: int) -> list[bytes]:
    def ev(delta, fin=None):
        return ("data: " + json.dumps({"id": "x", "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]})
                + "\n\n").encode()
    out = [b": keep-alive\n\n", ev({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "send_email",
                                                                                        "arguments": ""}}]})]
    out += [ev({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + size]}}]})
            for i in range(0, len(args), size)]
    return out + [ev({}, "tool_calls"), b"data: [DONE]\n\n"]


def _collect_openai(stream: bytes) -> str:
    args = ""
    for block in stream.decode().split("\n\n"):
        if block.startswith("data: {"):
            for ch in json.loads(block[6:])["choices"]:
                for tc in (ch.get("delta") or {}).get("tool_calls") or []:
                    args += (tc.get("function") or {}).get("arguments") or ""
    return args


@pytest.mark.parametrize("size,split", [(5, 1), (13, 7), (400, 64)])
def test_stream_guard_openai_fragments(guidance, size, split):
    ins, g = guidance
    guard = Guard(ins)
    sg = StreamGuard("openai_chat", lambda tool, a: guard.check_call(tool, a, g).arguments)
    raw = b"".join(_openai_stream(json.dumps({"to": "m@x.example", "body": COPY}), size))
    out = b"".join(sg(raw[i:i + split]) for i in range(0, len(raw), split)) + sg(b"")
    args = json.loads(_collect_openai(out))
    assert "chemotherapy" not in args["body"] and "Lakeside" in args["body"]
    assert out.startswith(b": keep-alive") and out.rstrip().endswith(b"data: [DONE]")


def test_stream_guard_anthropic_behind_the_session_part(guidance):
    ins, g = guidance
    guard = Guard(ins)
    args = json.dumps({"body": COPY})
    evs = [("content_block_start", {"type": "content_block_start", "index": 1,
                                    "content_block": {"type": "tool_use", "name": "send_email", "input": {}}})]
    evs += [("content_block_delta", {"type": "content_block_delta", "index": 1,
                                     "delta": {"type": "input_json_delta", "partial_json": args[i:i + 9]}})
            for i in range(0, len(args), 9)]
    evs += [("content_block_stop", {"type": "content_block_stop", "index": 1})]
    raw = b"".join(f"event: {n}\ndata: {json.dumps(o)}\n\n".encode() for n, o in evs)
    sg = StreamGuard("anthropic", lambda tool, a: guard.check_call(tool, a, g).arguments)
    out = Streamed([lambda b: b, sg])  # the reply filter's parts: the session's de-masking, then the guard
    text = (out.feed(raw[:50]) + out.feed(raw[50:]) + out.end()).decode()
    partial = "".join(json.loads(b.split("data: ", 1)[1])["delta"]["partial_json"]
                      for b in text.split("\n\n") if "input_json_delta" in b)
    assert "chemotherapy" not in json.loads(partial)["body"]
    assert text.rstrip().endswith('"content_block_stop", "index": 1}')


def test_unparseable_stream_passes_unchanged(guidance):
    sg = StreamGuard("openai_chat", lambda t, a: "{}")
    raw = b"data: {broken\n\nevent: x\ndata: y\n\n"
    assert sg(raw) + sg(b"") == raw


def test_experience_log_roundtrip_and_cli_export(tmp_path, guidance):
    import subprocess
    import sys
    from pathlib import Path

    from guardian_proxy.agents import ExperienceLog

    ins, g = guidance
    res = Guard(ins).check_call("send_email", json.dumps({"body": COPY}), g)
    log = ExperienceLog(tmp_path / "state" / "experience")
    log.record("openai_chat", openai_request(), g, "send_email", json.dumps({"body": COPY}), res)
    assert b"chemotherapy" not in log.path.read_bytes() and (log.path.stat().st_mode & 0o777) == 0o600
    [case] = log.cases()
    assert case["removed"] == 1 and case["context"][0]["content"] == INSTR and case["withheld"]
    bin_ = Path(sys.executable).parent / "guardian-proxy"
    out = tmp_path / "cases.jsonl"
    subprocess.run([str(bin_), "experience", "export", str(out), "--state-dir", str(tmp_path / "state")], check=True)
    assert json.loads(out.read_text())["leaking_action"]["tool"] == "send_email"


def test_sentences_keep_addresses_hosts_urls_and_numbers_whole():
    text = ("Please forward this to Linda Alvarez <linda.alvarez@gmail.com>. The file is at "
            "https://docs.example.org/a.b?c=1. It takes 3.5 days.")
    assert sentences(text) == ["Please forward this to Linda Alvarez <linda.alvarez@gmail.com>.",
                               "The file is at https://docs.example.org/a.b?c=1.", "It takes 3.5 days."]
