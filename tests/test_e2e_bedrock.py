"""End to end: a real boto3 `bedrock-runtime` client through a real `guardian-proxy run` (HTTPS, mitmproxy CA)
to a local Bedrock Runtime (tests/support/bedrock_server.py) that verifies every request's SigV4 signature
with the test credentials — so a rewritten request only reaches it when the proxy signed it again
(guardian_proxy.sigv4). Client and proxy get the same test keys through their environment; HOME and the AWS
config/credentials files point at empty temp files, so no real AWS configuration is ever read."""

import json
import re
import time

import pytest

from tests.support import bedrock_server as bs
from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow

NAME, EMAIL, SSN = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com", "123-45-6789"
INTRO = f"Hi, I'm {NAME} ({EMAIL}). Help me plan a week in Lisbon."
HAIKU = "anthropic.claude-3-haiku-20240307-v1:0"


def aws_env(d) -> dict[str, str]:
    (d / "aws-config").write_text("")
    (d / "aws-credentials").write_text("")
    return {"AWS_ACCESS_KEY_ID": bs.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": bs.SECRET_KEY, "AWS_SESSION_TOKEN": "",
            "AWS_DEFAULT_REGION": bs.REGION, "HOME": str(d), "AWS_CONFIG_FILE": str(d / "aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(d / "aws-credentials"), "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("bedrock")
    aws = aws_env(d)
    with pytest.MonkeyPatch.context() as mp:  # the client (this process) reads the same environment
        for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_ROLE_ARN",
                     "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
            mp.delenv(name, raising=False)
        for k, v in aws.items():
            mp.setenv(k, v)
        srv = bs.start_bedrock_server(d, [bs.HOST])
        px = start_proxy(d, srv.port, env=aws)
        try:
            yield srv, px, d
        finally:
            px.stop()
            srv.close()


def client(px):
    import boto3
    from botocore.config import Config

    cfg = Config(proxies={"https": px.url}, retries={"total_max_attempts": 1}, read_timeout=60, connect_timeout=10)
    return boto3.session.Session().client("bedrock-runtime", region_name=bs.REGION, config=cfg, verify=str(px.ca))


def expected(said: str) -> str:
    return f"Noted, {NAME}. I will keep {NAME}'s details; {NAME.upper()} is on file. You said: {said}"


def wire_since(srv, n: int) -> str:
    assert not srv.rejected, [r.rejected for r in srv.rejected]  # every request arrived correctly signed
    assert len(srv.requests) > n, "nothing reached the server"
    return srv.bodies_text(n)


def assert_clean(wire: str) -> None:
    for real in (NAME, EMAIL, SSN, "Zarkowsky", "quentin.zarkowsky"):
        assert real not in wire, real


def first_user_surrogate(body: dict) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
    return re.match(r"Hi, I'm (.+?) \(", content).group(1)


def test_converse_multi_turn_name_email_ssn(env):
    srv, px, _ = env
    br = client(px)
    n = len(srv.requests)
    msgs = [{"role": "user", "content": [{"text": INTRO}]}]
    system = [{"text": "You are a helpful assistant."}]
    r = br.converse(modelId=HAIKU, messages=msgs, system=system)
    reply = r["output"]["message"]["content"][0]["text"]
    assert reply == expected(INTRO)
    wire = wire_since(srv, n)
    assert_clean(wire)
    sur = first_user_surrogate(srv.requests[-1].body)
    assert sur != NAME and len(sur.split()) == 2
    assert srv.requests[-1].path == "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"

    said = f"My SSN is {SSN}; {NAME} needs a tax form."
    msgs += [{"role": "assistant", "content": [{"text": reply}]}, {"role": "user", "content": [{"text": said}]}]
    r = br.converse(modelId=HAIKU, messages=msgs, system=system)
    assert r["output"]["message"]["content"][0]["text"] == expected(said.replace(SSN, "[BLOCKED]"))
    wire = wire_since(srv, n + 1)
    assert_clean(wire)
    assert "[BLOCKED]" in wire
    assert first_user_surrogate(srv.requests[-1].body) == sur  # the same surrogate, turn after turn


def test_converse_stream_is_incremental_and_demasked(env):
    srv, px, _ = env
    br = client(px)
    n = len(srv.requests)
    r = br.converse_stream(modelId=HAIKU, messages=[{"role": "user", "content": [{"text": INTRO}]}])
    pieces, times, names = [], [], []
    for ev in r["stream"]:
        names.append(next(iter(ev)))
        if "contentBlockDelta" in ev:
            pieces.append(ev["contentBlockDelta"]["delta"]["text"])
            times.append(time.monotonic())
    assert "".join(pieces) == expected(INTRO)
    assert names[0] == "messageStart" and names[-3:] == ["contentBlockStop", "messageStop", "metadata"]
    assert len(pieces) > 20 and times[-1] - times[0] > 0.5  # arrived piece by piece, not in one go
    assert_clean(wire_since(srv, n))


def test_converse_stream_tool_use_input(env):
    srv, px, _ = env
    br = client(px)
    n = len(srv.requests)
    tools = {"tools": [{"toolSpec": {"name": "save_contact", "inputSchema": {"json": {"type": "object"}}}}]}
    r = br.converse_stream(modelId=HAIKU, messages=[{"role": "user", "content": [{"text": INTRO}]}], toolConfig=tools)
    args = "".join(ev["contentBlockDelta"]["delta"]["toolUse"]["input"] for ev in r["stream"]
                   if "contentBlockDelta" in ev)
    assert json.loads(args) == {"name": NAME, "email": EMAIL, "note": f"follow up with {NAME}"}
    assert_clean(wire_since(srv, n))


def anthropic_body(said: str) -> bytes:
    return json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 200, "system": "Be kind.",
                       "messages": [{"role": "user", "content": said}]}).encode()


def test_invoke_model_anthropic(env):
    srv, px, _ = env
    br = client(px)
    n = len(srv.requests)
    said = f"{INTRO} My SSN is {SSN}."
    r = br.invoke_model(modelId=HAIKU, body=anthropic_body(said), contentType="application/json",
                        accept="application/json")
    out = json.loads(r["body"].read())
    assert out["content"][0]["text"] == expected(said.replace(SSN, "[BLOCKED]"))
    wire = wire_since(srv, n)
    assert_clean(wire)
    assert "[BLOCKED]" in wire and srv.requests[-1].op == "invoke"


def test_invoke_model_with_response_stream_anthropic(env):
    srv, px, _ = env
    br = client(px)
    n = len(srv.requests)
    r = br.invoke_model_with_response_stream(modelId=HAIKU, body=anthropic_body(INTRO))
    chunks, times = [], []
    for ev in r["body"]:
        chunks.append(json.loads(ev["chunk"]["bytes"]))
        times.append(time.monotonic())
    text = "".join(c["delta"]["text"] for c in chunks if c["type"] == "content_block_delta")
    assert text == expected(INTRO)
    types = [c["type"] for c in chunks]
    assert types[0] == "message_start" and types[-1] == "message_stop"
    assert "amazon-bedrock-invocationMetrics" in chunks[-1]
    assert len(chunks) > 20 and times[-1] - times[0] > 0.5
    assert_clean(wire_since(srv, n))


def test_invoke_llama_prompt_template_stream(env):
    srv, px, _ = env
    br = client(px)
    n = len(srv.requests)
    prompt = ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
              f"<|start_header_id|>user<|end_header_id|>\n\n{INTRO}<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n")
    r = br.invoke_model_with_response_stream(modelId="meta.llama3-8b-instruct-v1:0",
                                             body=json.dumps({"prompt": prompt, "max_gen_len": 300}))
    text = "".join(json.loads(ev["chunk"]["bytes"])["generation"] for ev in r["body"])
    assert text == expected(INTRO)
    wire = wire_since(srv, n)
    assert_clean(wire)
    sent = srv.requests[-1].body["prompt"]
    assert sent.startswith("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>")
    assert sent.endswith("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")  # the template intact


def test_a_proxy_without_credentials_refuses_rather_than_send_a_broken_signature(env):
    srv, _, d = env
    from botocore.exceptions import ClientError

    (d / "nocreds").mkdir()
    px2 = start_proxy(d / "nocreds", srv.port, env={**aws_env(d / "nocreds"), "AWS_ACCESS_KEY_ID": "",
                                                     "AWS_SECRET_ACCESS_KEY": ""})
    try:
        br = client(px2)
        raw = {}
        br.meta.events.register("after-call", lambda http_response=None, **kw: raw.update(
            status=http_response.status_code, body=http_response.content))
        n = len(srv.requests)
        with pytest.raises(ClientError) as e:
            br.converse(modelId=HAIKU, messages=[{"role": "user", "content": [{"text": INTRO}]}])
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        assert raw["status"] == 403
        reason = json.loads(raw["body"])["reason"]
        assert "credentials" in reason and "AWS_ACCESS_KEY_ID" in reason, reason
        assert len(srv.requests) == n  # nothing left with a signature that no longer matches
    finally:
        px2.stop()
