"""A local AWS Bedrock Runtime for end-to-end tests: Converse, ConverseStream, InvokeModel and
InvokeModelWithResponseStream in Bedrock's own framing (JSON, and `application/vnd.amazon.eventstream`
binary messages with correct CRCs, one per HTTP chunk with a short sleep between them).

It VERIFIES the SigV4 signature of every request with the test credentials (its own computation from the
SigV4 specification, independent of botocore): a wrong or missing signature is answered 403
`InvalidSignatureException` as AWS answers it, an unknown access key 403 `UnrecognizedClientException`, so a
rewritten request only gets through when the proxy signed it again.

Answers name the first "Firstname Lastname" and the e-mail of the last user message, plain, possessive and
upper-case, and echo that message, in small pieces (3–5 characters) so surrogates split across events:
"Noted, {name}. I will keep {name}'s details; {NAME} is on file. You said: {message}". A Converse request with
`toolConfig` is answered with a `save_contact` tool use whose input carries the name and e-mail.
Model families by model id: anthropic.* (Messages), meta.* (Llama 3 prompt → generation), amazon.titan-text*
(inputText → outputText), amazon.nova* (Converse-like), mistral.* (prompt → outputs).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from guardian_proxy.chatapi.eventstream import encode_message, string_headers
from tests.support.llm_server import EMAIL, NAME, pieces
from tests.support.upstream import ClosingHandler, Served, serve

ACCESS_KEY = "AKIAGUARDIANE2ETEST1"
SECRET_KEY = "gUaRdIaN/e2e/SecretKey/0123456789ABCDEFabc"
REGION = "us-east-1"
HOST = f"bedrock-runtime.{REGION}.amazonaws.com"
PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"
SLEEP = 0.03

_AUTH = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$")


# ---------------------------------------------------------------------- SigV4, from the specification


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def canonical_request(method: str, raw_path: str, headers: dict[str, list[str]], signed: list[str], body: bytes) -> str:
    path, _, query = raw_path.partition("?")
    uri = quote(path, safe="/~")  # every service but S3: the (already encoded) path is encoded once more
    pairs = sorted(tuple(p.partition("=")[::2]) for p in query.split("&") if p) if query else []
    cq = "&".join(f"{k}={v}" for k, v in pairs)
    ch = "".join(f"{n}:{','.join(' '.join(v.split()) for v in headers.get(n, []))}\n" for n in signed)
    payload = (headers.get("x-amz-content-sha256") or [hashlib.sha256(body).hexdigest()])[0]
    return "\n".join([method.upper(), uri, cq, ch, ";".join(signed), payload])


def signature(secret: str, amz_date: str, scope: str, creq: str) -> str:
    date, region, service, term = scope.split("/")
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(creq.encode("utf-8")).hexdigest()])
    k = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), date), region), service), term)
    return hmac.new(k, sts.encode("utf-8"), hashlib.sha256).hexdigest()


def verify(method: str, raw_path: str, headers: dict[str, list[str]], body: bytes,
           access_key: str = ACCESS_KEY, secret: str = SECRET_KEY) -> tuple[str, str] | None:
    """None when the request is signed right by `access_key`; else (AWS error type, message)."""
    auth = (headers.get("authorization") or [""])[0]
    m = _AUTH.match(auth.strip())
    if m is None:
        return "MissingAuthenticationTokenException", "Missing Authentication Token"
    cred, signed_s, sig = m.groups()
    key, _, scope = cred.partition("/")
    if key != access_key:
        return "UnrecognizedClientException", "The security token included in the request is invalid."
    signed = signed_s.split(";")
    amz_date = (headers.get("x-amz-date") or [""])[0]
    if "host" not in signed or "x-amz-date" not in signed or not amz_date.startswith(scope.split("/")[0]):
        return "IncompleteSignatureException", "The request signature does not sign host and x-amz-date."
    creq = canonical_request(method, raw_path, headers, signed, body)
    if not hmac.compare_digest(signature(secret, amz_date, scope, creq), sig):
        return "InvalidSignatureException", ("The request signature we calculated does not match the signature "
                                             "you provided. Check your AWS Secret Access Key and signing method. "
                                             "Consult the service documentation for details.")
    return None


# ---------------------------------------------------------------------- what the "model" says


def _blocks_text(content) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and isinstance(b.get("text"), str) and b.get("type", "text") == "text":
            out.append(b["text"])
    return " ".join(out)


def last_user(body: dict) -> str:
    if isinstance(body.get("messages"), list):
        for m in reversed(body["messages"]):
            if isinstance(m, dict) and m.get("role") == "user":
                t = _blocks_text(m.get("content"))
                if t:
                    return t
        return ""
    prompt = body.get("prompt") if isinstance(body.get("prompt"), str) else body.get("inputText")
    if not isinstance(prompt, str):
        return body.get("message", "") if isinstance(body.get("message"), str) else ""
    for pat in (r"<\|start_header_id\|>user<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>", r"\[INST\]\s*(.*?)\s*\[/INST\]",
                r"User:\s*(.*?)\s*(?:\nBot:|$)"):
        found = re.findall(pat, prompt, re.S)
        if found:
            return found[-1]
    return prompt


def answer(body: dict) -> tuple[str, dict]:
    said = last_user(body)
    names, emails = NAME.findall(said), EMAIL.findall(said)
    name = names[0] if names else "friend"
    text = f"Noted, {name}. I will keep {name}'s details; {name.upper()} is on file. You said: {said}"
    return text, {"name": name, "email": emails[0] if emails else "", "note": f"follow up with {name}"}


def family(model: str) -> str:
    m = model.lower().rsplit("/", 1)[-1]
    for fam in ("anthropic", "meta", "amazon.titan", "amazon.nova", "mistral"):
        if m.startswith(fam) or f".{fam}" in m:
            return fam
    return "other"


# ---------------------------------------------------------------------- replies

_METRICS = {"inputTokenCount": 10, "outputTokenCount": 20, "invocationLatency": 100, "firstByteLatency": 10}


def converse_json(body: dict) -> dict:
    text, args = answer(body)
    tool = "toolConfig" in body
    content = [{"toolUse": {"toolUseId": "tooluse_1", "name": "save_contact", "input": args}}] if tool else \
        [{"text": text}]
    return {"output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if tool else "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}, "metrics": {"latencyMs": 100}}


def _ev(name: str, obj: dict) -> bytes:
    payload = json.dumps({**obj, "p": PAD[: 1 + len(json.dumps(obj)) % 40]}, separators=(",", ":")).encode()
    return encode_message(string_headers(event_type=name, content_type="application/json", message_type="event"),
                          payload)


def converse_events(body: dict) -> list[bytes]:
    text, args = answer(body)
    tool = "toolConfig" in body
    out = [_ev("messageStart", {"role": "assistant"})]
    if tool:
        out.append(_ev("contentBlockStart", {"contentBlockIndex": 0, "start": {
            "toolUse": {"toolUseId": "tooluse_1", "name": "save_contact"}}}))
        for p in pieces(json.dumps(args)):
            out.append(_ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": p}}}))
    else:
        for p in pieces(text):
            out.append(_ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}))
    out += [_ev("contentBlockStop", {"contentBlockIndex": 0}),
            _ev("messageStop", {"stopReason": "tool_use" if tool else "end_turn"}),
            _ev("metadata", {"usage": {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30},
                             "metrics": {"latencyMs": 100}})]
    return out


def invoke_json(model: str, body: dict) -> dict:
    text, _ = answer(body)
    fam = family(model)
    if fam == "anthropic":
        return {"id": "msg_bdrk_1", "type": "message", "role": "assistant", "model": "claude",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 20}}
    if fam == "meta":
        return {"generation": text, "prompt_token_count": 10, "generation_token_count": 20, "stop_reason": "stop"}
    if fam == "amazon.titan":
        return {"inputTextTokenCount": 10, "results": [{"tokenCount": 20, "outputText": text,
                                                        "completionReason": "FINISH"}]}
    if fam == "mistral":
        return {"outputs": [{"text": text, "stop_reason": "stop"}]}
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}}


def invoke_chunks(model: str, body: dict) -> list[dict]:
    """The model's own stream chunks (each goes out base64 in a `chunk` event)."""
    text, _ = answer(body)
    fam = family(model)
    ps = pieces(text)
    if fam == "anthropic":
        msg = {"id": "msg_bdrk_1", "type": "message", "role": "assistant", "model": "claude", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
        return ([{"type": "message_start", "message": msg},
                 {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
                + [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in ps]
                + [{"type": "content_block_stop", "index": 0},
                   {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 20}},
                   {"type": "message_stop", "amazon-bedrock-invocationMetrics": _METRICS}])
    if fam == "meta":
        return ([{"generation": p, "prompt_token_count": 10 if i == 0 else None, "generation_token_count": i + 1,
                  "stop_reason": None} for i, p in enumerate(ps)]
                + [{"generation": "", "prompt_token_count": None, "generation_token_count": len(ps),
                    "stop_reason": "stop", "amazon-bedrock-invocationMetrics": _METRICS}])
    if fam == "amazon.titan":  # the last chunk carries text and the completion reason together
        return [{"outputText": p, "index": 0, "totalOutputTextTokenCount": i + 1,
                 "completionReason": "FINISH" if i == len(ps) - 1 else None, "inputTextTokenCount": 10,
                 **({"amazon-bedrock-invocationMetrics": _METRICS} if i == len(ps) - 1 else {})}
                for i, p in enumerate(ps)]
    if fam == "mistral":
        return ([{"outputs": [{"text": p, "stop_reason": None}]} for p in ps]
                + [{"outputs": [{"text": "", "stop_reason": "stop"}], "amazon-bedrock-invocationMetrics": _METRICS}])
    return ([{"messageStart": {"role": "assistant"}}]
            + [{"contentBlockDelta": {"delta": {"text": p}, "contentBlockIndex": 0}} for p in ps]
            + [{"contentBlockStop": {"contentBlockIndex": 0}}, {"messageStop": {"stopReason": "end_turn"}},
               {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 20}},
                "amazon-bedrock-invocationMetrics": _METRICS}])


def chunk_event(obj: dict) -> bytes:
    inner = base64.b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode()
    payload = json.dumps({"bytes": inner, "p": PAD[: 1 + len(inner) % 40]}, separators=(",", ":")).encode()
    return encode_message(string_headers(event_type="chunk", content_type="application/json", message_type="event"),
                          payload)


# ---------------------------------------------------------------------- the server


@dataclass
class Request:
    method: str
    path: str
    model: str
    op: str
    headers: dict[str, list[str]]
    raw: bytes
    body: dict | None
    rejected: tuple[str, str] | None


@dataclass
class BedrockServer(Served):
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    sleep: float = SLEEP

    @property
    def accepted(self) -> list[Request]:
        return [r for r in self.requests if r.rejected is None]

    @property
    def rejected(self) -> list[Request]:
        return [r for r in self.requests if r.rejected is not None]

    def bodies_text(self, since: int = 0) -> str:
        """Every body received since request `since`, as text (JSON decoded, invoke prompts included)."""
        return "\n".join(r.raw.decode("utf-8", "replace") + "\n" + json.dumps(r.body, ensure_ascii=False)
                         for r in self.requests[since:])


_PATH = re.compile(r"^/model/([^/]+)/(converse|converse-stream|invoke|invoke-with-response-stream)$")


def _handler(srv: BedrockServer):
    class H(ClosingHandler):

        def _json(self, status: int, obj: dict, extra: dict | None = None) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-amzn-requestid", "00000000-0000-0000-0000-000000000001")
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def do_POST(self):
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            headers: dict[str, list[str]] = {}
            for k in self.headers.keys():
                headers.setdefault(k.lower(), self.headers.get_all(k) or [])
            m = _PATH.match(self.path.split("?", 1)[0])
            rejected = verify("POST", self.path, headers, raw)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            model, op = (unquote(m.group(1)), m.group(2)) if m else ("", "")
            with srv.lock:
                srv.requests.append(Request("POST", self.path, model, op, headers, raw, body, rejected))
            if rejected is not None:
                self._json(403, {"message": rejected[1]}, {"x-amzn-errortype": f"{rejected[0]}:http://internal.amazon.com/"
                                                                               "coral/com.amazon.coral.service/"})
                return
            if m is None or not isinstance(body, dict):
                self._json(400, {"message": "Malformed input request"}, {"x-amzn-errortype": "ValidationException"})
                return
            if op == "converse":
                self._json(200, converse_json(body))
                return
            if op == "invoke":
                self._json(200, invoke_json(model, body))
                return
            events = converse_events(body) if op == "converse-stream" else \
                [chunk_event(c) for c in invoke_chunks(model, body)]
            self.send_response(200)
            self.send_header("content-type", "application/vnd.amazon.eventstream")
            self.send_header("x-amzn-requestid", "00000000-0000-0000-0000-000000000002")
            if op == "invoke-with-response-stream":
                self.send_header("x-amzn-bedrock-content-type", "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for ev in events:
                self.chunk(ev)
                time.sleep(srv.sleep)
            self.chunk(b"")

    return H


def start_bedrock_server(tls_dir: Path | None = None, names: list[str] | None = None) -> BedrockServer:
    srv = BedrockServer(server=None)  # type: ignore[arg-type]
    srv.server = serve(_handler(srv), tls_dir, names or [HOST])
    return srv
