"""A worst-case agent behind an OpenAI/Anthropic-compatible API, for end-to-end tests of the guard.

When the latest messages of a request are tool results, the "model" answers with a tool call
`send_email` whose `body` copies every tool result it was given (and `to` from the instruction);
otherwise it answers with text. It records every request body. JSON and SSE (arguments in small pieces).
Like api.mistral.ai, it answers HTTP 400 ("Expected last role User or Tool") to a message list whose last
message is a `system` message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.support.llm_server import _sse, pieces
from tests.support.upstream import Served, send_body, serve

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


def _observed(body: dict) -> tuple[str, str]:
    texts, user = [], ""
    for m in body.get("messages") or []:
        c = m.get("content")
        if m.get("role") == "tool":
            texts.append(c if isinstance(c, str) else json.dumps(c))
        elif isinstance(c, list):
            for b in c:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    bc = b.get("content")
                    texts.append(bc if isinstance(bc, str) else json.dumps(bc))
        if m.get("role") == "user" and isinstance(c, str):
            user = c
    return "\n".join(texts), user


def _copy_everything(raw: str) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    out = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            out.append(v)
    walk(data)
    return "\n".join(out)


@dataclass
class AgentServer(Served):
    received: list[dict] = field(default_factory=list)


def _handler(srv: AgentServer):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            srv.received.append(body)
            msgs = body.get("messages") if isinstance(body.get("messages"), list) else []
            if msgs and isinstance(msgs[-1], dict) and msgs[-1].get("role") == "system":
                # as api.mistral.ai answers a message list that ends with a system message
                err = json.dumps({"object": "error", "message": "Expected last role User or Tool (or Assistant with "
                                  "prefix True) for serving but got system", "type": "invalid_request_message_order",
                                  "code": "3230"}).encode()
                self.send_response(400)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(err)))
                self.end_headers()
                self.wfile.write(err)
                return
            observed, user = _observed(body)
            to = (EMAIL.findall(user) or ["someone@example.com"])[0]
            args = json.dumps({"to": to, "subject": "Update", "body": "\n".join(
                _copy_everything(part) for part in observed.split("\n") if part) if observed else "hi"})
            stream = body.get("stream") is True
            anthropic = self.path.rstrip("/").endswith("/messages")
            if anthropic:
                res = self._anthropic(args, stream)
            else:
                res = self._openai(args, stream, whole="mistral" in (self.headers.get("host") or ""))
            if isinstance(res, dict):
                send_body(self, json.dumps(res).encode())
            else:
                send_body(self, res, "text/event-stream")

        @staticmethod
        def _openai(args: str, stream: bool, whole: bool = False):
            base = {"id": "chatcmpl-agent", "created": 1, "model": "agent"}
            usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}  # the mistralai SDK requires it
            call = {"id": "call_9", "type": "function", "function": {"name": "send_email", "arguments": args}}
            if not stream:
                return {**base, "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
                        "message": {"role": "assistant", "content": None, "tool_calls": [call]}}], "usage": usage}
            base["object"] = "chat.completion.chunk"
            if whole:  # as api.mistral.ai streams a tool call: complete, in one chunk with the finish reason
                return [_sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "",
                                    "tool_calls": [{**call, "index": 0}]}, "finish_reason": "tool_calls"}],
                                    "usage": usage}), b"data: [DONE]\n\n"]
            out = [_sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": "call_9", "type": "function", "function": {"name": "send_email", "arguments": ""}}]},
                "finish_reason": None}]})]
            for p in pieces(args, (7, 11)):
                out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": p}}]}, "finish_reason": None}]}))
            out.append(_sse(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                                   "usage": usage}))
            out.append(b"data: [DONE]\n\n")
            return out

        @staticmethod
        def _anthropic(args: str, stream: bool):
            msg = {"id": "msg_agent", "type": "message", "role": "assistant", "model": "agent",
                   "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
            if not stream:
                return {**msg, "content": [{"type": "tool_use", "id": "toolu_9", "name": "send_email",
                                            "input": json.loads(args)}]}
            out = [_sse("message_start", {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None}}),
                   _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                       "type": "tool_use", "id": "toolu_9", "name": "send_email", "input": {}}})]
            for p in pieces(args, (7, 11)):
                out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                        "delta": {"type": "input_json_delta", "partial_json": p}}))
            out += [_sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                                           "usage": {"output_tokens": 1}}),
                    _sse("message_stop", {"type": "message_stop"})]
            return out

    return H


def start_agent_server() -> AgentServer:
    srv = AgentServer(server=None)  # type: ignore[arg-type]
    srv.server = serve(_handler(srv))
    return srv
