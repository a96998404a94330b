"""AWS Bedrock Runtime dialects: recognition by host + model id, the slots of Converse and of every model
family's InvokeModel body, prompt templates cut and joined back, and de-masking of the exact event
streams tests/support/bedrock_server.py sends (cut into chunks of every size; re-read by botocore)."""

import base64
import json

import pytest
from botocore.eventstream import EventStreamBuffer

from guardian_proxy import chatapi
from guardian_proxy.chatapi import eventstream as es
from guardian_proxy.chatapi.dialects import bedrock
from guardian_proxy.session.demask import Demasker
from guardian_proxy.session.stream import StreamDemasker, demask_body
from tests.support import bedrock_server as srv

HOST = "bedrock-runtime.us-east-1.amazonaws.com"
HAIKU = "anthropic.claude-3-haiku-20240307-v1%3A0"
DM = Demasker([("Alex Smith", "Maria Gonzalez", True), ("Alex", "Maria", False), ("Smith", "Gonzalez", False),
               ("alex.smith@example.net", "maria.g@gmail.com", True)])
SAID = "I'm Alex Smith (alex.smith@example.net)."


def rec(path: str, body: dict, host: str = HOST):
    return chatapi.recognise_body(host, path, json.dumps(body).encode(), "application/json")


def paths(req):
    return {s.path: s.text for s in req.slots}


def kinds(path: str, host: str = HOST) -> list[str]:
    return [d.name for d in chatapi.dialects.find(host, path)]


# ---------------------------------------------------------------------- recognition


def test_hosts_operations_and_model_families():
    for host in (HOST, "bedrock-runtime-fips.us-gov-west-1.amazonaws.com",
                 "vpce-0a1b2c.bedrock-runtime.eu-west-1.vpce.amazonaws.com", "bedrock-runtime.cn-north-1.amazonaws.com.cn"):
        assert kinds(f"/model/{HAIKU}/converse", host) == ["bedrock_converse"], host
    assert kinds(f"/model/{HAIKU}/converse", "bedrock.us-east-1.amazonaws.com") == []  # the control plane
    assert kinds(f"/model/{HAIKU}/converse", "example.com") == []
    assert kinds(f"/model/{HAIKU}/count-tokens") == [] and kinds("/async-invoke") == []
    assert kinds(f"/model/{HAIKU}/converse-stream") == ["bedrock_converse"]
    cases = {HAIKU: "bedrock_anthropic", "us.anthropic.claude-3-5-sonnet-20240620-v1%3A0": "bedrock_anthropic",
             "global.anthropic.claude-sonnet-4-20250514-v1%3A0": "bedrock_anthropic",
             "meta.llama3-8b-instruct-v1%3A0": "bedrock_llama", "amazon.titan-text-express-v1": "bedrock_titan",
             "amazon.nova-pro-v1%3A0": "bedrock_nova", "mistral.mistral-large-2407-v1%3A0": "bedrock_mistral",
             "cohere.command-r-plus-v1%3A0": "bedrock_cohere", "ai21.jamba-1-5-mini-v1%3A0": "bedrock_invoke",
             "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.meta.llama3-2-1b-instruct-v1%3A0":
                 "bedrock_llama",
             "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aprovisioned-model%2Fabc123": "bedrock_invoke",
             "amazon.titan-embed-text-v2%3A0": "bedrock_invoke"}
    for model, kind in cases.items():
        for op in ("invoke", "invoke-with-response-stream"):
            assert kinds(f"/model/{model}/{op}") == [kind], (model, op)
    assert bedrock.model_of(f"/model/{HAIKU}/invoke?x=1") == ("anthropic.claude-3-haiku-20240307-v1:0", "invoke")


def test_converse_blocks_tools_documents_and_what_is_not_a_slot():
    body = {"system": [{"text": "You help Ann."}, {"cachePoint": {"type": "default"}},
                       {"guardContent": {"text": {"text": "guarded Ann"}}}],
            "messages": [
                {"role": "user", "content": [{"text": "I am Ann Lee"}, {"image": {"format": "png", "source": {"bytes": "x"}}},
                                             {"document": {"format": "txt", "name": "cv", "context": "Ann's CV",
                                                           "source": {"text": "Ann Lee, Oslo"}}},
                                             {"document": {"format": "pdf", "name": "d", "source": {"bytes": "AAA"}}}]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Ann", "signature": "sig"}}},
                    {"text": "Hello Ann"},
                    {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"who": "Ann Lee", "n": 3}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [
                    {"text": "Ann Lee lives in Oslo"}, {"json": {"email": "ann@x.org", "tags": ["Ann"]}}]}}]},
                {"role": "user", "content": [{"text": "thanks"}]}],
            "promptVariables": {"topic": {"text": "Ann's trip"}},
            "inferenceConfig": {"maxTokens": 10}}
    req = rec(f"/model/{HAIKU}/converse", body)
    assert req.kind == "bedrock_converse" and not req.stream and req.history and req.turns == 2
    assert paths(req) == {
        "json:$.system[0].text": "You help Ann.", "json:$.system[2].guardContent.text.text": "guarded Ann",
        "json:$.messages[0].content[0].text": "I am Ann Lee",
        "json:$.messages[0].content[2].document.context": "Ann's CV",
        "json:$.messages[0].content[2].document.source.text": "Ann Lee, Oslo",
        "json:$.messages[1].content[1].text": "Hello Ann",
        "json:$.messages[1].content[2].toolUse.input.who": "Ann Lee",
        "json:$.messages[2].content[0].toolResult.content[0].text": "Ann Lee lives in Oslo",
        "json:$.messages[2].content[0].toolResult.content[1].json.email": "ann@x.org",
        "json:$.messages[2].content[0].toolResult.content[1].json.tags[0]": "Ann",
        "json:$.messages[3].content[0].text": "thanks", "json:$.promptVariables.topic.text": "Ann's trip"}
    roles = {s.path: (s.role, s.turn) for s in req.slots}
    assert roles["json:$.messages[1].content[2].toolUse.input.who"] == ("assistant", 1)
    assert roles["json:$.messages[2].content[0].toolResult.content[0].text"] == ("tool", 1)  # not a new turn
    assert roles["json:$.messages[3].content[0].text"] == ("user", 2)
    assert rec(f"/model/{HAIKU}/converse-stream", body).stream
    chatapi.set_text(req.data, req.slots[2].parts, "I am Bo Diaz")
    assert json.loads(chatapi.dialects.get(req.kind).serialise(req))["messages"][0]["content"][0]["text"] == \
        "I am Bo Diaz"
    assert rec(f"/model/{HAIKU}/converse", {"modelId": "x"}) is None  # not the shape: not a chat
    managed = rec("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aprompt%2FP1/converse",
                  {"promptVariables": {"who": {"text": "Ann Lee"}}})
    assert paths(managed) == {"json:$.promptVariables.who.text": "Ann Lee"}


def test_invoke_anthropic_messages_and_legacy_prompt():
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 100, "system": "Be kind to Ann.",
            "messages": [{"role": "user", "content": "I'm Ann Lee"},
                         {"role": "assistant", "content": [{"type": "text", "text": "Hi Ann"}]},
                         {"role": "user", "content": [{"type": "text", "text": "bye"}]}]}
    req = rec(f"/model/{HAIKU}/invoke", body)
    assert req.kind == "bedrock_anthropic" and not req.stream and req.turns == 2
    assert set(paths(req)) == {"json:$.system", "json:$.messages[0].content", "json:$.messages[1].content[0].text",
                               "json:$.messages[2].content[0].text"}
    assert rec(f"/model/{HAIKU}/invoke-with-response-stream", body).stream
    legacy = {"prompt": "\n\nHuman: I'm Ann Lee\n\nAssistant: Hi Ann\n\nHuman: bye\n\nAssistant:",
              "max_tokens_to_sample": 10}
    req = rec("/model/anthropic.claude-v2/invoke", legacy)
    assert [(s.text, s.role, s.turn) for s in req.slots] == [("I'm Ann Lee", "user", 1), ("Hi Ann", "assistant", 1),
                                                             ("bye", "user", 2)]


LLAMA3 = ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe kind.<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nI am Ann Lee.<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\nHi Ann.<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nMail ann@x.org<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\n")
LLAMA2 = "<s>[INST] <<SYS>>\nBe kind.\n<</SYS>>\n\nI am Ann Lee. [/INST] Hi Ann. </s><s>[INST] Mail ann@x.org [/INST]"


@pytest.mark.parametrize("prompt", [LLAMA3, LLAMA2])
def test_llama_templates_are_cut_into_messages_and_joined_back(prompt):
    req = rec("/model/meta.llama3-70b-instruct-v1%3A0/invoke", {"prompt": prompt, "max_gen_len": 50})
    assert req.kind == "bedrock_llama" and req.turns == 2
    assert [(s.text.strip(), s.role, s.turn) for s in req.slots] == [
        ("Be kind.", "system", 0), ("I am Ann Lee.", "user", 1), ("Hi Ann.", "assistant", 1),
        ("Mail ann@x.org", "user", 2)]
    d = chatapi.dialects.get(req.kind)
    assert json.loads(d.serialise(req)) == {"prompt": prompt, "max_gen_len": 50}  # untouched: byte-identical
    for s in req.slots:
        chatapi.set_text(req.data, s.parts, s.text.replace("Ann Lee", "Bo Diaz").replace("ann@x.org", "bo@y.com"))
    out = json.loads(d.serialise(req))
    assert out["prompt"] == prompt.replace("Ann Lee", "Bo Diaz").replace("ann@x.org", "bo@y.com")
    assert set(out) == {"prompt", "max_gen_len"}


def test_titan_mistral_cohere_nova_and_other_models():
    titan = rec("/model/amazon.titan-text-premier-v1%3A0/invoke",
                {"inputText": "User: I am Ann Lee\nBot: Hello\nUser: again\nBot:", "textGenerationConfig": {}})
    assert titan.kind == "bedrock_titan" and [(s.text.strip(), s.role, s.turn) for s in titan.slots] == [
        ("I am Ann Lee", "user", 1), ("Hello", "user", 1), ("again", "user", 2)]  # plain-word markers: all analysed
    plain = rec("/model/amazon.titan-text-express-v1/invoke", {"inputText": "Write to Ann Lee"})
    assert paths(plain) == {"json:$.inputText": "Write to Ann Lee"}
    mis = rec("/model/mistral.mistral-7b-instruct-v0%3A2/invoke", {"prompt": "<s>[INST] I am Ann Lee [/INST]"})
    assert mis.kind == "bedrock_mistral" and [s.text for s in mis.slots] == ["I am Ann Lee"]
    chat = rec("/model/mistral.mistral-large-2407-v1%3A0/invoke-with-response-stream",
               {"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "I am Ann Lee"}]})
    assert chat.kind == "bedrock_mistral" and chat.stream and set(paths(chat)) == {
        "json:$.messages[0].content", "json:$.messages[1].content"}
    co = rec("/model/cohere.command-r-v1%3A0/invoke", {
        "message": "And Bo?", "preamble": "Be kind.", "chat_history": [
            {"role": "USER", "message": "I am Ann Lee"}, {"role": "CHATBOT", "message": "Hi Ann"}],
        "documents": [{"title": "cv", "snippet": "Ann Lee, Oslo"}]})
    assert co.kind == "bedrock_cohere" and co.turns == 2
    assert [(s.path, s.role, s.turn) for s in co.slots] == [
        ("json:$.preamble", "system", 0), ("json:$.chat_history[0].message", "user", 1),
        ("json:$.chat_history[1].message", "assistant", 1), ("json:$.documents[0].title", "user", 1),
        ("json:$.documents[0].snippet", "user", 1), ("json:$.message", "user", 2)]
    nova = rec("/model/us.amazon.nova-lite-v1%3A0/invoke", {
        "schemaVersion": "messages-v1", "system": [{"text": "sys"}],
        "messages": [{"role": "user", "content": [{"text": "I am Ann Lee"}]}], "inferenceConfig": {}})
    assert nova.kind == "bedrock_nova" and set(paths(nova)) == {"json:$.system[0].text",
                                                                "json:$.messages[0].content[0].text"}
    other = "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aimported-model%2Fxyz"
    anth = rec(f"/model/{other}/invoke", {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 5,
                                          "messages": [{"role": "user", "content": "I am Ann Lee"}]})
    assert anth.kind == "bedrock_invoke" and paths(anth) == {"json:$.messages[0].content": "I am Ann Lee"}
    ds = rec("/model/deepseek.r1-v1%3A0/invoke", {"prompt": "<｜begin▁of▁sentence｜><｜User｜>I am Ann Lee<｜Assistant｜><think>\n"})
    assert [(s.text, s.role) for s in ds.slots] == [("I am Ann Lee", "user")]
    gpt = rec("/model/openai.gpt-oss-20b-1%3A0/invoke", {"messages": [{"role": "user", "content": "I am Ann Lee"}]})
    assert gpt.kind == "bedrock_invoke" and paths(gpt) == {"json:$.messages[0].content": "I am Ann Lee"}
    assert rec("/model/amazon.titan-embed-text-v2%3A0/invoke", {"inputText": "Ann Lee"}).slots  # analysed anyway
    assert rec("/model/stability.sd3-large-v1%3A0/invoke", {"seed": 1}) is None


# ---------------------------------------------------------------------- replies


def run(sd: StreamDemasker, raw: bytes, step: int) -> bytes:
    return b"".join(sd(raw[i:i + step]) for i in range(0, len(raw), step)) + sd(b"")


def messages(raw: bytes):
    buf = EventStreamBuffer()  # botocore checks every CRC and length on the way
    buf.add_data(raw)
    return list(buf)


def demasker(kind: str) -> StreamDemasker:
    d = chatapi.dialects.get(kind)
    return StreamDemasker(kind, DM, d.framer("application/vnd.amazon.eventstream"))


STEPS = [1, 3, 7, 50, 10 ** 6]
BODY = {"messages": [{"role": "user", "content": [{"text": SAID}]}]}


@pytest.mark.parametrize("step", STEPS)
def test_converse_stream_text(step):
    raw = b"".join(srv.converse_events(BODY))
    out = run(demasker("bedrock_converse"), raw, step)
    msgs = messages(out)
    names = [m.headers[":event-type"] for m in msgs]
    assert names[0] == "messageStart" and names[-3:] == ["contentBlockStop", "messageStop", "metadata"]
    text = "".join(json.loads(m.payload)["delta"]["text"] for m in msgs if m.headers[":event-type"] == "contentBlockDelta")
    assert text == DM.full(srv.answer(BODY)[0])
    assert "Maria Gonzalez's details; MARIA GONZALEZ" in text and text.endswith("I'm Maria Gonzalez (maria.g@gmail.com).")


@pytest.mark.parametrize("step", [1, 5, 10 ** 6])
def test_converse_stream_tool_input(step):
    raw = b"".join(srv.converse_events({**BODY, "toolConfig": {"tools": []}}))
    msgs = messages(run(demasker("bedrock_converse"), raw, step))
    args = "".join(json.loads(m.payload)["delta"]["toolUse"]["input"] for m in msgs
                   if m.headers[":event-type"] == "contentBlockDelta")
    assert json.loads(args) == {"name": "Maria Gonzalez", "email": "maria.g@gmail.com",
                                "note": "follow up with Maria Gonzalez"}


def test_converse_reasoning_deltas_pass_byte_for_byte():
    sig = {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Alex Smith", "signature": "s1"}}}
    raw = es.event_message("contentBlockDelta", sig) + b"".join(srv.converse_events(BODY))
    out = run(demasker("bedrock_converse"), raw, 4)
    assert out.startswith(es.event_message("contentBlockDelta", sig))


def test_converse_json_reply_and_exceptions():
    body = json.dumps(srv.converse_json(BODY)).encode()
    out = json.loads(demask_body("bedrock_converse", body, DM))
    assert out["output"]["message"]["content"][0]["text"] == DM.full(srv.answer(BODY)[0])
    d = chatapi.dialects.get("bedrock_converse")
    assert d.closes("throttlingException", {"message": "x"}) == [()]
    assert d.closes("contentBlockStop", {"contentBlockIndex": 2}) == [("b", 2)]
    assert d.framer("application/json") is None


INVOKE = {"anthropic": HAIKU, "meta": "meta.llama3-8b-instruct-v1%3A0", "amazon.titan": "amazon.titan-text-express-v1",
          "mistral": "mistral.mistral-7b-instruct-v0%3A2", "nova": "amazon.nova-micro-v1%3A0"}
KIND = {"anthropic": "bedrock_anthropic", "meta": "bedrock_llama", "amazon.titan": "bedrock_titan",
        "mistral": "bedrock_mistral", "nova": "bedrock_nova"}


def chunk_text(chunk: dict) -> str:
    if chunk.get("type") == "content_block_delta":
        return chunk["delta"]["text"]
    if "contentBlockDelta" in chunk:
        return chunk["contentBlockDelta"]["delta"]["text"]
    for key in ("generation", "outputText"):
        if key in chunk:
            return chunk[key]
    if "outputs" in chunk:
        return "".join(o["text"] for o in chunk["outputs"])
    return ""


@pytest.mark.parametrize("fam", list(INVOKE))
@pytest.mark.parametrize("step", [1, 9, 10 ** 6])
def test_invoke_streams_of_every_family(fam, step):
    from urllib.parse import unquote

    model = unquote(INVOKE[fam])
    body = {"messages": [{"role": "user", "content": SAID}]} if fam in ("anthropic", "nova") else {"prompt": SAID}
    raw = b"".join(srv.chunk_event(c) for c in srv.invoke_chunks(model, body))
    for kind in (KIND[fam], "bedrock_invoke"):  # the family's dialect, and the shape-reading fallback
        out = run(demasker(kind), raw, step)
        msgs = messages(out)
        assert all(m.headers[":event-type"] == "chunk" for m in msgs)
        chunks = [json.loads(base64.b64decode(json.loads(m.payload)["bytes"])) for m in msgs]
        assert all("p" in json.loads(m.payload) for m in msgs[:-1] or msgs)  # the padding is kept
        assert "".join(chunk_text(c) for c in chunks) == DM.full(srv.answer(body)[0]), (kind, fam)
        if fam == "anthropic":
            types = [c["type"] for c in chunks]
            assert types.index("content_block_stop") > max(i for i, t in enumerate(types) if t == "content_block_delta")


def test_invoke_json_replies_are_demasked_whole():
    for fam, model in INVOKE.items():
        body = {"prompt": SAID}
        raw = json.dumps(srv.invoke_json(model, body)).encode()
        out = demask_body(KIND[fam], raw, DM)
        assert out is not None and b"Maria Gonzalez" in out and b"Alex Smith" not in out, fam


def test_synthetic_chunks_of_other_shapes():
    d = chatapi.dialects.get("bedrock_invoke")
    cases = [({"choices": [{"index": 0, "delta": {"content": "Alex Smi"}, "finish_reason": None}]}, ("c", 0, "delta")),
             ({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Al"}, "stop_reason": None}]},
              ("c", 0, "message")),
             ({"choices": [{"index": 0, "text": "Al", "stop_reason": None}]}, ("c", 0, "text")),
             ({"generations": [{"text": "Al"}]}, ("g", 0)),
             ({"is_finished": False, "event_type": "text-generation", "text": "Al"}, ("t", "text")),
             ({"completion": "Al", "stop_reason": None}, ("t", "completion"))]
    for chunk, channel in cases:
        (ref,) = d.deltas("chunk", chunk)
        assert ref.channel == channel, chunk
        name, obj = d.synth(chunk, ref.channel, "X")
        (again,) = d.deltas(name, obj)
        assert again.holder[again.key] == "X" and again.channel == channel
    assert d.closes("chunk", {"is_finished": True, "event_type": "stream-end", "finish_reason": "COMPLETE"}) == [()]
    assert d.closes("chunk", {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) == [("c", 0)]
    # a final chunk that still carries text does not close its own channel (flushed at the end)
    assert d.closes("chunk", {"outputText": "end.", "completionReason": "FINISH"}) is None
    assert d.closes("modelStreamErrorException", {"message": "x"}) == [()]
