"""A local OpenAI/Anthropic/Ollama-compatible chat server for end-to-end tests.

It records every request body it receives and answers by mentioning what it was given: the first
"Firstname Lastname" of the last user message (plain, possessive and upper-case), the first e-mail
address, and the whole last user message echoed. Streams are cut into small pieces (3–5 characters) so
that surrogates are split across events; a chat stream to a `together` host carries each piece twice, as
`delta.content` and as `choices[].text`, as Together's does. Request header `x-test-gzip: 1` gzips a streamed answer;
`tools` in the request make the answer a tool call whose JSON arguments carry the name and e-mail.
Endpoints: /v1/chat/completions, /v1/responses, /v1/messages, /v1/completions (legacy text completions:
`choices[].text`), /v1/complete (Anthropic's legacy Text Completions: `completion`) (JSON and SSE), /api/chat,
/api/generate (JSON and NDJSON). Every answer closes its connection: through `--redirect-upstream`, mitmproxy opens a
new upstream connection per request and stalls on the sixth request of a client connection while the
idle keep-alive ones stay open (seen with bare mitmdump + scripts/redirect_upstream.py too).
"""

from __future__ import annotations

import json
import re
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.upstream import ClosingHandler, Served, send_body, serve

NAME = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def last_user(body: dict) -> str:
    if isinstance(body.get("prompt"), str):
        return body["prompt"]
    if isinstance(body.get("input"), str):
        return body["input"]
    msgs = body.get("messages") or [m for m in body.get("input") or [] if isinstance(m, dict)]
    for m in reversed(msgs):
        if m.get("role") == "user":
            return _text(m.get("content"))
    return ""


def answer(body: dict) -> tuple[str, dict]:
    said = last_user(body)
    names = NAME.findall(said)
    emails = EMAIL.findall(said)
    name = names[0] if names else "friend"
    text = f"Noted, {name}. I will keep {name}'s details; {name.upper()} is on file. You said: {said}"
    args = {"name": name, "email": emails[0] if emails else "", "note": f"follow up with {name}"}
    return text, args


def pieces(text: str, size: tuple[int, int] = (3, 5)) -> list[str]:
    out, i, k = [], 0, 0
    while i < len(text):
        n = size[0] + (k % (size[1] - size[0] + 1))
        out.append(text[i:i + n])
        i, k = i + n, k + 1
    return out


def _sse(name: str | None, obj) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(obj)}\n\n".encode()


def openai_chat(body: dict, stream: bool, text_copy: bool = False) -> list[bytes] | dict:
    text, args = answer(body)
    tool = bool(body.get("tools"))
    base = {"id": "chatcmpl-test", "created": int(time.time()), "model": body.get("model", "m")}
    if not stream:
        msg = {"role": "assistant", "content": None if tool else text}
        if tool:
            msg["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": "save_contact", "arguments": json.dumps(args)}}]
        return {**base, "object": "chat.completion", "choices": [{"index": 0, "message": msg,
                "finish_reason": "tool_calls" if tool else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    base["object"] = "chat.completion.chunk"
    out = [b": keep-alive\n\n", _sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant"},
                                                                  "finish_reason": None}]})]
    if tool:
        out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": 0, "id": "call_1", "type": "function", "function": {"name": "save_contact", "arguments": ""}}]},
            "finish_reason": None}]}))
        for p in pieces(json.dumps(args)):
            out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{
                "index": 0, "function": {"arguments": p}}]}, "finish_reason": None}]}))
    else:
        for p in pieces(text):
            choice = {"index": 0, "delta": {"content": p}, "finish_reason": None}
            if text_copy:  # as Together sends it: the piece again as choices[].text
                choice = {"index": 0, "text": p, "logprobs": None, "finish_reason": None, "seed": None,
                          "delta": {"token_id": 1, "role": "assistant", "content": p, "tool_calls": None}}
            out.append(_sse(None, {**base, "choices": [choice]}))
    out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {},
                                                "finish_reason": "tool_calls" if tool else "stop"}]}))
    out.append(b"data: [DONE]\n\n")
    return out


def anthropic_messages(body: dict, stream: bool) -> list[bytes] | dict:
    text, _ = answer(body)
    msg = {"id": "msg_test", "type": "message", "role": "assistant", "model": body.get("model", "m"),
           "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    if not stream:
        return {**msg, "content": [{"type": "text", "text": text}]}
    out = [_sse("message_start", {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None}}),
           _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}}),
           _sse("ping", {"type": "ping"})]
    for p in pieces(text):
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": p}}))
    out += [_sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                   "usage": {"output_tokens": 1}}),
            _sse("message_stop", {"type": "message_stop"})]
    return out


def openai_responses(body: dict, stream: bool) -> list[bytes] | dict:
    text, _ = answer(body)
    rid = f"resp_{abs(hash((text, time.time()))) % 10**12}"
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    resp = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model", "m"),
            "status": "completed", "output": [item], "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}
    if not stream:
        return resp
    n = 0

    def ev(obj):
        nonlocal n
        n += 1
        return _sse(obj["type"], {**obj, "sequence_number": n})

    part = {"type": "output_text", "text": "", "annotations": []}
    out = [ev({"type": "response.created", "response": {**resp, "status": "in_progress", "output": []}}),
           ev({"type": "response.output_item.added", "output_index": 0,
               "item": {**item, "status": "in_progress", "content": []}}),
           ev({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0,
               "part": part})]
    for p in pieces(text):
        out.append(ev({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                       "content_index": 0, "delta": p}))
    out += [ev({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "text": text}),
            ev({"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "part": {**part, "text": text}}),
            ev({"type": "response.output_item.done", "output_index": 0, "item": item}),
            ev({"type": "response.completed", "response": resp})]
    return out


def text_completions(body: dict, stream: bool) -> list[bytes] | dict:
    """OpenAI-style legacy Completions as Together, Fireworks and vLLM serve them: `choices[].text`."""
    text, _ = answer(body)
    base = {"id": "cmpl-test", "object": "text_completion", "created": int(time.time()), "model": body.get("model", "m")}
    if not stream:
        return {**base, "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    out = [_sse(None, {**base, "choices": [{"index": 0, "text": p, "logprobs": None, "finish_reason": None}]})
           for p in pieces(text)]
    out.append(_sse(None, {**base, "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "stop"}]}))
    out.append(b"data: [DONE]\n\n")
    return out


def anthropic_complete(body: dict, stream: bool) -> list[bytes] | dict:
    """Anthropic's legacy Text Completions (`/v1/complete`): `completion`, streamed as `completion` events."""
    said = body.get("prompt", "")
    turn = said.rsplit("\n\nHuman:", 1)[-1].split("\n\nAssistant:", 1)[0].strip()
    text, _ = answer({"prompt": turn})
    base = {"type": "completion", "id": "compl_test", "model": body.get("model", "m"), "log_id": "compl_test"}
    if not stream:
        return {**base, "completion": text, "stop_reason": "stop_sequence", "stop": "\n\nHuman:"}
    out = [_sse("completion", {**base, "completion": p, "stop_reason": None}) for p in pieces(text)]
    out.insert(1, _sse("ping", {"type": "ping"}))
    out.append(_sse("completion", {**base, "completion": "", "stop_reason": "stop_sequence", "stop": "\n\nHuman:"}))
    return out


def ollama(body: dict, stream: bool, generate: bool) -> list[bytes] | dict:
    text, _ = answer(body)
    base = {"model": body.get("model", "m"), "created_at": "2026-01-01T00:00:00Z"}
    final = {**base, "done": True, "done_reason": "stop"}
    if generate:
        final["context"] = [1, 2, 3, len(text)]
    if not stream:
        return {**final, "response": text} if generate else {**final, "message": {"role": "assistant", "content": text}}
    out = []
    for p in pieces(text):
        out.append((json.dumps({**base, "response": p, "done": False} if generate else
                               {**base, "message": {"role": "assistant", "content": p}, "done": False}) + "\n").encode())
    out.append((json.dumps({**final, "response": ""} if generate else
                           {**final, "message": {"role": "assistant", "content": ""}}) + "\n").encode())
    return out


@dataclass
class LLMServer(Served):
    received: list[dict] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def bodies_text(self, since: int = 0) -> str:
        return "\n".join(json.dumps(b, ensure_ascii=False) for b in self.received[since:])


def _handler(srv: LLMServer):
    class H(ClosingHandler):

        def do_POST(self):
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n)
            if self.headers.get("content-encoding") == "gzip":
                raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS)
            body = json.loads(raw or b"{}")
            srv.received.append(body)
            path = self.path.split("?")[0]
            srv.paths.append(path)
            ollama_path = path.startswith("/api/")
            stream = body.get("stream") is not False if ollama_path else body.get("stream") is True
            if path.endswith("/chat/completions"):
                res = openai_chat(body, stream, "together" in (self.headers.get("host") or ""))
            elif path.endswith("/responses"):
                res = openai_responses(body, stream)
            elif path.endswith("/messages"):
                res = anthropic_messages(body, stream)
            elif path.endswith("/completions"):
                res = text_completions(body, stream)
            elif path.endswith("/complete"):
                res = anthropic_complete(body, stream)
            elif path == "/api/chat":
                res = ollama(body, stream, False)
            elif path == "/api/generate":
                res = ollama(body, stream, True)
            else:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            if isinstance(res, dict):
                send_body(self, json.dumps(res).encode())
                return
            gz = self.headers.get("x-test-gzip") == "1"
            self.send_response(200)
            self.send_header("content-type", "application/x-ndjson" if ollama_path else "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            if gz:
                self.send_header("content-encoding", "gzip")
            self.end_headers()
            comp = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS) if gz else None
            for chunk in res:
                data = comp.compress(chunk) + comp.flush(zlib.Z_SYNC_FLUSH) if comp else chunk
                self.chunk(data)
            if comp:
                tail = comp.flush()
                self.chunk(tail)
            self.chunk(b"")

    return H


def start_llm_server(tls_dir: Path | None = None, names: list[str] | None = None) -> LLMServer:
    srv = LLMServer(server=None)  # type: ignore[arg-type]
    srv.server = serve(_handler(srv), tls_dir, names or ["api.openai.com", "api.anthropic.com"])
    return srv
