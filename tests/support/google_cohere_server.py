"""A local Gemini API / Vertex AI / Cohere-compatible chat server for end-to-end tests (modelled on llm_server).

It records every request body (and path) it receives and answers by naming what the last user message said:
the first "Firstname Lastname", the first e-mail, and the whole message echoed (`llm_server.answer`). Replies
use each service's real framing: Gemini's GenerateContentResponse JSON and `alt=sse` chunks (CRLF-separated
`data:` lines, the last text piece in the chunk that carries `finishReason`, as the real API does), Vertex's
Anthropic partner models (rawPredict / streamRawPredict: Anthropic Messages), Cohere v2 JSON and SSE
(`event:` + `data:`), Cohere v1 JSON and NDJSON (`application/stream+json`). Streams come in small pieces
(3–5 characters) so surrogates split across events, with `PAUSE` seconds between pieces so a test can see
them arrive incrementally; `finished[path]` is when the last piece of the latest answer was written.
A request with `tools` is answered with a function / tool call carrying the name and e-mail (streamed:
Gemini puts a text piece and the functionCall in one chunk). Every answer closes its connection.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import llm_server
from tests.support.upstream import ClosingHandler, Served, send_body, serve

PAUSE = 0.05
MODEL = "gemini-2.5-flash"


def _text_of_parts(parts) -> str:
    return " ".join(p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)
                    and not p.get("thought"))


def last_user(body: dict) -> str:
    """The last user message of a Gemini, Cohere v2 or v1 body (Anthropic bodies: llm_server.last_user)."""
    if isinstance(body.get("contents"), list):
        for c in reversed(body["contents"]):
            if isinstance(c, dict) and (c.get("role") or "user") == "user" and _text_of_parts(c.get("parts")):
                return _text_of_parts(c.get("parts"))
        return ""
    if isinstance(body.get("message"), str):  # Cohere v1
        return body["message"]
    return llm_server.last_user(body)


def answer(body: dict) -> tuple[str, dict]:
    return llm_server.answer({"messages": [{"role": "user", "content": last_user(body)}]})


pieces = llm_server.pieces


def _usage() -> dict:
    return {"promptTokenCount": 12, "candidatesTokenCount": 30, "totalTokenCount": 42}


# ---------------------------------------------------------------------- Gemini / Vertex


def gemini(body: dict, stream: bool) -> list[bytes] | dict:
    text, args = answer(body)
    tool = bool(body.get("tools"))
    base = {"modelVersion": MODEL, "responseId": "resp-gc-1"}
    if not stream:
        parts = ([{"text": "Saving the contact."}, {"functionCall": {"name": "save_contact", "args": args}}]
                 if tool else [{"text": text}])
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0,
                                "safetyRatings": []}], "usageMetadata": _usage(), **base}

    def chunk(parts, finish=False):
        cand = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            cand["finishReason"] = "STOP"
        return ("data: " + json.dumps({"candidates": [cand], "usageMetadata": _usage(), **base}) + "\r\n\r\n").encode()

    if tool:
        ps = pieces(f"I will save {args['name']}.")
        return ([chunk([{"text": p}]) for p in ps[:-1]]
                + [chunk([{"text": ps[-1]}, {"functionCall": {"name": "save_contact", "args": args}}], True)])
    ps = pieces(text)
    return [chunk([{"text": p}]) for p in ps[:-1]] + [chunk([{"text": ps[-1]}], True)]


# ---------------------------------------------------------------------- Cohere


def _sse(name: str | None, obj) -> bytes:
    return llm_server._sse(name, obj)


def cohere_v2(body: dict, stream: bool) -> list[bytes] | dict:
    text, args = answer(body)
    tool = bool(body.get("tools"))
    plan = f"I will save the contact of {args['name']}."
    calls = [{"id": "call_c1", "type": "function", "function": {"name": "save_contact", "arguments": json.dumps(args)}}]
    usage = {"billed_units": {"input_tokens": 10, "output_tokens": 20}, "tokens": {"input_tokens": 10, "output_tokens": 20}}
    if not stream:
        msg = ({"role": "assistant", "tool_plan": plan, "tool_calls": calls} if tool
               else {"role": "assistant", "content": [{"type": "text", "text": text}]})
        return {"id": "c-resp-1", "finish_reason": "TOOL_CALL" if tool else "COMPLETE", "message": msg, "usage": usage}

    def ev(obj):
        return _sse(obj["type"], obj)

    out = [ev({"type": "message-start", "id": "c-resp-1", "delta": {"message": {
        "role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}}})]
    if tool:
        out += [ev({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}}) for p in pieces(plan)]
        out.append(ev({"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {
            "id": "call_c1", "type": "function", "function": {"name": "save_contact", "arguments": ""}}}}}))
        out += [ev({"type": "tool-call-delta", "index": 0, "delta": {"message": {"tool_calls": {
            "function": {"arguments": p}}}}}) for p in pieces(json.dumps(args))]
        out.append(ev({"type": "tool-call-end", "index": 0}))
    else:
        out.append(ev({"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text",
                                                                                             "text": ""}}}}))
        out += [ev({"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": p}}}})
                for p in pieces(text)]
        out.append(ev({"type": "content-end", "index": 0}))
    out.append(ev({"type": "message-end", "id": "c-resp-1", "delta": {
        "finish_reason": "TOOL_CALL" if tool else "COMPLETE", "usage": usage}}))
    return out


def cohere_v1(body: dict, stream: bool) -> list[bytes] | dict:
    text, _ = answer(body)
    history = list(body.get("chat_history") or []) + [{"role": "USER", "message": body.get("message", "")},
                                                      {"role": "CHATBOT", "message": text}]
    final = {"text": text, "generation_id": "g-1", "chat_history": history, "finish_reason": "COMPLETE",
             "meta": {"api_version": {"version": "1"}}}
    if not stream:
        return final

    def line(obj):
        return (json.dumps(obj) + "\n").encode()

    out = [line({"is_finished": False, "event_type": "stream-start", "generation_id": "g-1"})]
    out += [line({"is_finished": False, "event_type": "text-generation", "text": p}) for p in pieces(text)]
    out.append(line({"is_finished": True, "event_type": "stream-end", "finish_reason": "COMPLETE", "response": final}))
    return out


# ---------------------------------------------------------------------- server


@dataclass
class GoogleCohereServer(Served):
    received: list[dict] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    finished: dict[str, float] = field(default_factory=dict)

    def bodies_text(self, since: int = 0) -> str:
        return "\n".join(json.dumps(b, ensure_ascii=False) for b in self.received[since:])


def route(path: str, body: dict) -> tuple[list[bytes] | dict | None, str]:
    """(answer, stream content type) for a request path (query included)."""
    bare = path.split("?", 1)[0]
    if bare.endswith(":generateContent"):
        return gemini(body, False), ""
    if bare.endswith(":streamGenerateContent"):
        return gemini(body, True), "text/event-stream" if "alt=sse" in path else ""
    if bare.endswith(":rawPredict") or bare.endswith(":streamRawPredict"):
        stream = body.get("stream") is True or bare.endswith(":streamRawPredict")
        return llm_server.anthropic_messages(body, stream), "text/event-stream"
    if bare.endswith("/v2/chat"):
        return cohere_v2(body, body.get("stream") is True), "text/event-stream"
    if bare.endswith("/v1/chat"):
        stream = body.get("stream") is True
        return cohere_v1(body, stream), "application/stream+json"
    return None, ""


def _handler(srv: GoogleCohereServer):
    class H(ClosingHandler):

        def do_POST(self):
            n = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}")
            srv.received.append(body)
            srv.paths.append(self.path)
            srv.headers.append({k.lower(): v for k, v in self.headers.items()})
            res, ctype = route(self.path, body)
            if res is None:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            if isinstance(res, dict):
                send_body(self, json.dumps(res).encode())
                return
            if not ctype:  # streamGenerateContent without alt=sse: one JSON array
                send_body(self, json.dumps([json.loads(c.decode()[6:]) for c in res]).encode())
                return
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in res:
                self.chunk(chunk)
                time.sleep(PAUSE)
            srv.finished[self.path.split("?", 1)[0]] = time.time()
            self.chunk(b"")

    return H


NAMES = ["generativelanguage.googleapis.com", "aiplatform.googleapis.com", "us-central1-aiplatform.googleapis.com",
         "api.cohere.com", "api.cohere.ai"]


def start_google_cohere_server(tls_dir: Path | None = None, names: list[str] | None = None) -> GoogleCohereServer:
    srv = GoogleCohereServer(server=None)  # type: ignore[arg-type]
    srv.server = serve(_handler(srv), tls_dir, names or NAMES)
    return srv
